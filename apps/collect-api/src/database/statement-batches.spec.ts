import { StatementBatches } from './statement-batches.js';

/** A statement stand-in that records each batch and answers when told to. */
function recorder(fail: (items: string[]) => boolean = () => false) {
  const batches: string[][] = [];
  const open: Array<() => void> = [];
  const run = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      batches.push(items);
      open.push(() => (fail(items) ? reject(new Error(`failed: ${items.join(',')}`)) : resolve(items.map((i) => `done ${i}`))));
    });
  const answerAll = async () => {
    while (open.length) {
      open.shift()!();
      await new Promise((r) => setImmediate(r));
    }
  };
  return { run, batches, answerAll };
}

const key = (item: string) => item.split('#')[0]!;

describe('StatementBatches (group commit)', () => {
  it('runs a lone call at once, groups the calls that arrive meanwhile, each with its own answer', async () => {
    const r = recorder();
    const batches = new StatementBatches(r.run, key, { maxInFlight: 1, maxItems: 10 });
    const first = batches.submit('a');
    expect(r.batches).toEqual([['a']]);
    const rest = ['b', 'c', 'd'].map((i) => batches.submit(i));
    expect(r.batches).toHaveLength(1);
    await r.answerAll();
    expect(await first).toBe('done a');
    expect(await Promise.all(rest)).toEqual(['done b', 'done c', 'done d']);
    expect(r.batches).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('keeps items of the same key in different statements, in order, and bounds a batch', async () => {
    const r = recorder();
    const batches = new StatementBatches(r.run, key, { maxInFlight: 1, maxItems: 2 });
    const all = ['x', 'k#1', 'k#2', 'm', 'n', 'k#3'].map((i) => batches.submit(i));
    await r.answerAll();
    expect(await Promise.all(all)).toEqual(['done x', 'done k#1', 'done k#2', 'done m', 'done n', 'done k#3']);
    expect(r.batches).toEqual([['x'], ['k#1', 'm'], ['k#2', 'n'], ['k#3']]);
  });

  it('runs at most maxInFlight statements at once', async () => {
    const r = recorder();
    const batches = new StatementBatches(r.run, key, { maxInFlight: 2, maxItems: 10 });
    const all = ['a', 'b', 'c', 'd'].map((i) => batches.submit(i));
    expect(r.batches).toEqual([['a'], ['b']]);
    await r.answerAll();
    await Promise.all(all);
    expect(r.batches).toEqual([['a'], ['b'], ['c', 'd']]);
  });

  it('spareAfterMs: the calls that wait go together behind the statement on its way', async () => {
    const r = recorder();
    const batches = new StatementBatches(r.run, key, { maxInFlight: 2, maxItems: 10, spareAfterMs: 60_000 });
    const all = ['a', 'b', 'c', 'd'].map((i) => batches.submit(i));
    expect(r.batches).toEqual([['a']]);
    await r.answerAll();
    expect(await Promise.all(all)).toEqual(['done a', 'done b', 'done c', 'done d']);
    expect(r.batches).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('spareAfterMs: a statement that stalls does not hold up the calls behind it', async () => {
    const r = recorder();
    const batches = new StatementBatches(r.run, key, { maxInFlight: 2, maxItems: 10, spareAfterMs: 20 });
    const first = batches.submit('a');
    const rest = ['b', 'c'].map((i) => batches.submit(i));
    expect(r.batches).toEqual([['a']]);
    // 'a' is never answered meanwhile: the second statement starts by itself (no further call).
    while (r.batches.length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(r.batches).toEqual([['a'], ['b', 'c']]);
    await r.answerAll();
    expect(await first).toBe('done a');
    expect(await Promise.all(rest)).toEqual(['done b', 'done c']);
  });

  it('a failed batch runs each item alone: only the bad one fails', async () => {
    const r = recorder((items) => items.includes('bad'));
    const batches = new StatementBatches(r.run, key, { maxInFlight: 1, maxItems: 10 });
    const first = batches.submit('a');
    const grouped = ['b', 'bad', 'c'].map((i) => batches.submit(i).then((v) => ({ v }), (e: Error) => ({ e: e.message })));
    await r.answerAll();
    await first;
    expect(await Promise.all(grouped)).toEqual([{ v: 'done b' }, { e: 'failed: bad' }, { v: 'done c' }]);
    expect(r.batches).toEqual([['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
  });

  it('an item that loses a deadlock alone runs once more; a second loss, or any other error, reaches its caller', async () => {
    // PostgreSQL's deadlock_detected as node-postgres reports it: the statement wrote nothing.
    const lost = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const losses = new Map([['once', 1], ['twice', 2]]);
    const runs: string[][] = [];
    const run = async (items: string[]) => {
      runs.push(items);
      for (const i of items) {
        const left = losses.get(i) ?? 0;
        if (left > 0) {
          losses.set(i, left - 1);
          throw lost();
        }
        if (i === 'bad') throw Object.assign(new Error('invalid input syntax'), { code: '22P02' });
      }
      return items.map((i) => `done ${i}`);
    };
    const batches = new StatementBatches(run, key, { maxInFlight: 1, maxItems: 10 });
    const outcome = (i: string) => batches.submit(i).then((v) => ({ v }), (e: { code: string }) => ({ e: e.code }));
    expect(await outcome('once')).toEqual({ v: 'done once' });
    expect(await outcome('twice')).toEqual({ e: '40P01' });
    expect(await outcome('bad')).toEqual({ e: '22P02' });
    expect(runs).toEqual([['once'], ['once'], ['twice'], ['twice'], ['bad']]);
    // In a batch: the batch fails, each item runs alone, the one that loses again alone runs once more.
    runs.length = 0;
    losses.set('x', 2);
    const grouped = Promise.all(['x', 'y'].map(outcome));
    expect(await grouped).toEqual([{ v: 'done x' }, { v: 'done y' }]);
    expect(runs.filter((b) => b.length === 1 && b[0] === 'x')).toHaveLength(2);
  });

  it('gatherTurn: the calls of one event-loop turn go in one statement, and so do those of the turn after a statement ends', async () => {
    const r = recorder();
    const batches = new StatementBatches(r.run, key, { maxInFlight: 1, maxItems: 10, gatherTurn: true });
    // Requests read in one turn reach the batcher from several promise jobs of that turn.
    const first: Array<Promise<string>> = [];
    await Promise.all([0, 1, 2].map(async (i) => void first.push(batches.submit(`t${i}`))));
    expect(r.batches).toEqual([]); // nothing starts before the turn ends
    await new Promise((res) => setImmediate(res));
    expect(r.batches).toEqual([['t0', 't1', 't2']]);
    const second = ['u', 'v'].map((i) => batches.submit(i));
    await r.answerAll();
    await new Promise((res) => setImmediate(res)); // the second statement starts at the end of the turn its first ended in
    await r.answerAll();
    expect(await Promise.all(first)).toEqual(['done t0', 'done t1', 'done t2']);
    expect(await Promise.all(second)).toEqual(['done u', 'done v']);
    expect(r.batches).toEqual([['t0', 't1', 't2'], ['u', 'v']]);
  });

  it('gatherTurn: a lone call waits for no timer, only for the end of its turn', async () => {
    const r = recorder();
    const batches = new StatementBatches(r.run, key, { maxInFlight: 2, maxItems: 10, gatherTurn: true });
    const lone = batches.submit('a');
    await new Promise((res) => setImmediate(res));
    expect(r.batches).toEqual([['a']]);
    await r.answerAll();
    expect(await lone).toBe('done a');
  });
});
