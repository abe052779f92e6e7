import { loadCollectConfig } from '../../config/collect-config.js';
import { DestinationGate, type GateDecision } from './destination-gate.js';

/** The gate on the test run's real Redis: many slots in one round trip are the slots of as many single calls. */
const config = loadCollectConfig({ REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: `gate-spec-${process.pid}-${Date.now()}`, FORWARD_DEFAULT_RATE_LIMIT_PER_MINUTE: '0' });
const gate = new DestinationGate(config);
afterAll(() => gate.onModuleDestroy());

const timeOf = (d: GateDecision) => (d.send ? d.at : d.retryAt.getTime());

/**
 * (sent, ms from t0) of each decision, as the expected one when within 400 ms of it (slots are
 * 1,000 ms apart). t0 is a decision's own time, never the clock before a call: the first call
 * also opens the Redis connection, which on a loaded CI machine took 626 ms; the decisions of
 * one call are exact among themselves, and those of later calls are off by a round trip.
 */
const shape = (ds: GateDecision[], t0: number, expected: Array<[boolean, number]>) =>
  ds.map((d, i) => {
    const ms = timeOf(d) - t0;
    return [d.send, expected[i] && Math.abs(ms - expected[i][1]) < 400 ? expected[i][1] : ms];
  });

describe('DestinationGate', () => {
  it('reserveMany(n) answers what n calls of reserve answer: near slots taken in order, further ones deferred on slots of their own', async () => {
    // 60/min: one request a second, a burst of 1; slots more than 2 s away are deferred.
    const single = { id: 1, name: 'generic_json' as const, rateLimitPerMinute: 60 };
    const many = { ...single, id: 2 };
    const one: GateDecision[] = [];
    for (let i = 0; i < 5; i++) one.push(await gate.reserve(single));
    const batch = await gate.reserveMany(many, 5);
    const expected: Array<[boolean, number]> = [[true, 0], [true, 1000], [true, 2000], [false, 3000], [false, 4000]];
    expect(shape(one, timeOf(one[0]), expected)).toEqual(expected);
    expect(shape(batch, timeOf(batch[0]), expected)).toEqual(expected);
    // The schedule moved on for both: the next slot comes after the ones taken and deferred.
    expect(shape([await gate.reserve(many)], timeOf(batch[0]), [[false, 5000]])).toEqual([[false, 5000]]);
  });

  it('an unlimited destination takes every slot at once, until a Retry-After pauses it', async () => {
    const service = { id: 3, name: 'generic_json' as const, rateLimitPerMinute: null };
    const now: Array<[boolean, number]> = [[true, 0], [true, 0], [true, 0]];
    const open = await gate.reserveMany(service, 3);
    expect(shape(open, timeOf(open[0]), now)).toEqual(now);
    // The pause starts at Redis's clock when the script runs, somewhere between the clock reads
    // around the call (435 ms apart on a loaded machine); a deferral's time is the pause's end
    // as seen after the reply, so it lies between the first read and the last, plus 3 s.
    const before = Date.now();
    await gate.pause(service, 3_000);
    const deferred = await gate.reserveMany(service, 2);
    const after = Date.now();
    expect(deferred.map((d) => d.send)).toEqual([false, false]);
    for (const d of deferred) {
      expect(timeOf(d)).toBeGreaterThanOrEqual(before + 3000 - 5);
      expect(timeOf(d)).toBeLessThanOrEqual(after + 3000 + 5);
    }
  });
});
