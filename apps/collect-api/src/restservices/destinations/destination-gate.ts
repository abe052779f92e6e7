import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import { CollectConfig } from '../../config/collect-config.js';
import { deliveryMetrics } from '../delivery/delivery-metrics.js';
import { effectiveRateLimit } from './destination-limits.js';
import type { RestServiceEntity } from '../restservice.entities.js';

/**
 * `count` atomic steps of a destination's schedule in one round trip (GCRA, the token bucket
 * written as a "theoretical arrival time"): `tat` is when the bucket is empty again. A request
 * conforms once `tat - (burst - 1) * interval` has passed; a caller whose turn comes within
 * `maxWait` takes the slot and waits for it, one further out is told when to come back, on a
 * slot of its own (`dtat`) so that deferred callers do not all return at once. The answer is a
 * flat list of (admitted, wait ms) pairs, one per slot asked for, the same as `count` calls of
 * one slot each. `pause` (a `Retry-After`) pushes `tat` out. Redis' clock is the only clock, so
 * every worker sees the same schedule.
 */
const GATE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local maxWait = tonumber(ARGV[3])
local pause = tonumber(ARGV[4])
local count = tonumber(ARGV[5])
local tat = tonumber(redis.call('HGET', KEYS[1], 'tat') or '0')
if tat < now then tat = now end
if pause > 0 then
  local untilAt = now + pause + (burst - 1) * interval
  if untilAt > tat then redis.call('HSET', KEYS[1], 'tat', untilAt) end
  redis.call('PEXPIRE', KEYS[1], pause + burst * interval + 60000)
  return {0, pause}
end
local out = {}
local admitted = false
local dtat = nil
local expire = 0
for i = 1, count do
  local allowAt = tat - (burst - 1) * interval
  local wait = allowAt - now
  if wait < 0 then wait = 0 end
  if wait <= maxWait then
    tat = tat + interval
    admitted = true
    if tat - now > expire then expire = tat - now end
    out[#out + 1] = 1
    out[#out + 1] = wait
  else
    if dtat == nil then dtat = tonumber(redis.call('HGET', KEYS[1], 'dtat') or '0') end
    if dtat < allowAt then dtat = allowAt end
    out[#out + 1] = 0
    out[#out + 1] = dtat - now
    dtat = dtat + interval
    if dtat - now > expire then expire = dtat - now end
  end
end
if admitted then redis.call('HSET', KEYS[1], 'tat', tat) end
if dtat ~= nil then redis.call('HSET', KEYS[1], 'dtat', dtat) end
if admitted or dtat ~= nil then redis.call('PEXPIRE', KEYS[1], math.ceil(expire) + 60000) end
return out
`;

/** The gate script as an ioredis command: sent by its SHA (EVALSHA), its text only once per connection. */
type GateRedis = Redis & { collectGate(key: string, interval: number, burst: number, maxWait: number, pause: number, count: number): Promise<number[]> };

type GatedService = Pick<RestServiceEntity, 'id' | 'name' | 'rateLimitPerMinute'>;

/**
 * The bucket of a service: one request per `interval` ms, `burst` at once (a tenth of a
 * second's worth: smooth enough for per-minute quotas, while a high limit still sends a few
 * requests in parallel). Unlimited: interval 0, so only a pause holds requests back.
 */
function schedule(service: GatedService, defaultPerMinute: number): { interval: number; burst: number } {
  const limit = effectiveRateLimit(service, defaultPerMinute);
  return limit ? { interval: 60_000 / limit, burst: Math.max(1, Math.ceil(limit / 600)) } : { interval: 0, burst: 1 };
}

export type GateDecision = { send: true; at: number } | { send: false; retryAt: Date };

/**
 * Destination care before and after each request (docs/restservices.md, "Limits"): the
 * service's rate limit as a Redis token bucket shared by every worker, applied before sending
 * (a burst is spread out instead of being answered 429), and a `Retry-After` from the
 * destination holding back every later request to it, whatever kind sent it. The delivery
 * handler awaits `admit` before a request and calls `settle` after it. When Redis cannot be
 * reached the gate lets requests through (logged): the receiver's own 429s and the retry
 * schedule still apply.
 */
@Injectable()
export class DestinationGate implements OnModuleDestroy {
  private readonly logger = new Logger(DestinationGate.name);
  private readonly redis: GateRedis;
  private readonly prefix: string;
  private readonly maxWaitMs: number;
  private readonly defaultPerMinute: number;

  constructor(config: CollectConfig) {
    this.defaultPerMinute = config.FORWARD_DEFAULT_RATE_LIMIT_PER_MINUTE;
    this.redis = new Redis(config.REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1500 }) as GateRedis;
    this.redis.defineCommand('collectGate', { numberOfKeys: 1, lua: GATE_SCRIPT });
    this.redis.on('error', () => undefined);
    this.prefix = `${config.REDIS_PREFIX}:restservice-gate:`;
    // Waiting in the worker is cheaper than a round trip through the outbox, up to a point: a
    // slot further out than this (or than one request may take) goes back to the outbox.
    this.maxWaitMs = Math.min(2_000, config.FORWARD_TIMEOUT_MS);
  }

  /**
   * Takes the service's next slot: `send` with the time it comes (at most a couple of seconds
   * away), or when to come back. Call `wait` with it right before the request, so the work in
   * between (loading the submission, building the payload) overlaps the wait.
   */
  async reserve(service: GatedService): Promise<GateDecision> {
    return (await this.reserveMany(service, 1))[0];
  }

  /** `count` slots of the service in one round trip, in order: what `count` calls of `reserve` answer. */
  async reserveMany(service: GatedService, count: number): Promise<GateDecision[]> {
    if (count <= 0) return [];
    const { interval, burst } = schedule(service, this.defaultPerMinute);
    let reply: number[];
    try {
      reply = await this.redis.collectGate(this.prefix + service.id, interval, burst, this.maxWaitMs, 0, count);
    } catch (err) {
      this.logger.warn({ serviceId: service.id, err: (err as Error).message }, 'destination limit not applied: redis unavailable');
      return Array.from({ length: count }, () => ({ send: true, at: Date.now() }));
    }
    const decisions: GateDecision[] = [];
    for (let i = 0; i < count; i++) {
      const [admitted, waitMs] = [reply[2 * i], reply[2 * i + 1]];
      if (admitted) {
        decisions.push({ send: true, at: Date.now() + waitMs });
      } else {
        deliveryMetrics.deferred.inc({ service: service.name });
        decisions.push({ send: false, retryAt: new Date(Date.now() + waitMs) });
      }
    }
    return decisions;
  }

  /**
   * Waits for a reserved slot. A process that wakes up late (a busy event loop, a GC pause)
   * gives the slot up and takes a new one, so the requests of a stall do not leave together;
   * false (with the time to come back) when no slot is near any more.
   */
  async wait(service: GatedService, slot: { at: number }): Promise<GateDecision> {
    const lateMs = Math.max(25, schedule(service, this.defaultPerMinute).interval);
    let at = slot.at;
    for (let round = 0; round < 3; round++) {
      const waitMs = at - Date.now();
      if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
      if (Date.now() - at <= lateMs) return { send: true, at };
      const again = await this.reserve(service);
      if (!again.send) return again;
      at = again.at;
    }
    deliveryMetrics.deferred.inc({ service: service.name });
    return { send: false, retryAt: new Date(Date.now() + lateMs) };
  }

  /** `reserve` and `wait` in one step. */
  async admit(service: GatedService): Promise<GateDecision> {
    const slot = await this.reserve(service);
    return slot.send ? this.wait(service, slot) : slot;
  }

  /** After a request: a `Retry-After` on a 429 or 503 holds back every request to the destination for that long. */
  async settle(service: GatedService, result: { statusCode: number | null; retryAfterMs: number | null }): Promise<void> {
    if (!result.retryAfterMs || (result.statusCode !== 429 && result.statusCode !== 503)) return;
    await this.pause(service, result.retryAfterMs);
  }

  /** Nothing goes to the destination for `ms` (capped at a day). */
  async pause(service: GatedService, ms: number): Promise<void> {
    const { interval, burst } = schedule(service, this.defaultPerMinute);
    try {
      await this.redis.collectGate(this.prefix + service.id, interval, burst, 0, Math.max(1, Math.min(Math.round(ms), 86_400_000)), 1);
    } catch (err) {
      this.logger.warn({ serviceId: service.id, err: (err as Error).message }, 'Retry-After not shared: redis unavailable');
    }
  }

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
