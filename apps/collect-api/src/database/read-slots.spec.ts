import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { CollectConfig } from '../config/collect-config.js';
import type { ReadPool } from './read-pool.js';
import { ReadSlots } from './read-slots.js';

/** A response stand-in: ReadSlots only listens for 'close' and reads the socket for the stall watch. */
function response(): ServerResponse & { end(): void } {
  const res = new EventEmitter() as EventEmitter & { writableFinished: boolean; socket: null; end(): void };
  res.writableFinished = false;
  res.socket = null;
  res.end = () => {
    res.writableFinished = true;
    res.emit('close');
  };
  return res as unknown as ServerResponse & { end(): void };
}

function slots(config: Partial<CollectConfig>): ReadSlots {
  const full = { READ_POOL_SIZE: 2, READS_PER_USER: 1, READ_SLOT_WAIT_MS: 60_000, READ_SLOT_QUEUE: 8, STREAM_STALL_TIMEOUT_MS: 60_000, ...config } as CollectConfig;
  return new ReadSlots({} as ReadPool, full);
}

/** The HTTP status a refused open answers with (0 when it was served). */
function statusOf(p: Promise<unknown>): Promise<number> {
  return p.then(
    () => 0,
    (err: { getStatus(): number }) => err.getStatus(),
  );
}

describe('read slots: waiting for a slot (docs/security.md, "Streamed reads and heavy queries")', () => {
  it('a read past its own limit waits and is served when the first one ends, in arrival order', async () => {
    const s = slots({});
    const first = response();
    await s.open('u', first);
    const order: string[] = [];
    const second = response();
    const third = response();
    const p2 = s.open('u', second).then(() => order.push('second'));
    const p3 = s.open('u', third).then(() => order.push('third'));
    expect(s.inUse).toBe(1);
    first.end();
    await p2;
    expect(s.inUse).toBe(1);
    second.end();
    await p3;
    expect(order).toEqual(['second', 'third']);
    third.end();
    expect(s.inUse).toBe(0);
  });

  it('with no wait, or a full queue, the refusal comes at once: 429 for the own limit, 503 for the pool', async () => {
    const now = slots({ READ_SLOT_WAIT_MS: 0 });
    await now.open('u', response());
    expect(await statusOf(now.open('u', response()))).toBe(429);
    await now.open('v', response());
    expect(await statusOf(now.open('w', response()))).toBe(503);

    const short = slots({ READ_SLOT_QUEUE: 1 });
    await short.open('u', response());
    const waiter = response();
    const waiting = short.open('u', waiter);
    expect(await statusOf(short.open('x', response()).then(() => short.open('y', response())))).toBe(503);
    // Its leaving clears its wait's timer, which would otherwise keep the Jest worker alive for READ_SLOT_WAIT_MS.
    waiter.emit('close');
    expect(await statusOf(waiting)).toBe(429);
  });

  it('a waiting client that leaves gives its place up and takes no slot', async () => {
    const s = slots({});
    const first = response();
    await s.open('u', first);
    const leaving = response();
    const gone = s.open('u', leaving);
    leaving.emit('close');
    expect(await statusOf(gone)).toBe(429);
    first.end();
    expect(s.inUse).toBe(0);
  });

  it('a wait that runs out answers 429 naming the limit', async () => {
    const s = slots({ READ_SLOT_WAIT_MS: 20 });
    await s.open('u', response());
    expect(await statusOf(s.open('u', response()))).toBe(429);
  });
});
