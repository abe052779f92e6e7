import { WorkLimiter, WorkLimiterFullError } from './work-limiter.js';

describe('WorkLimiter', () => {
  it('runs at most `concurrency` tasks at once, queues `maxQueue`, refuses the rest at once', async () => {
    const limiter = new WorkLimiter('test', 2, 1);
    let running = 0;
    let peak = 0;
    const releases: Array<() => void> = [];
    const task = () =>
      limiter.run(async () => {
        peak = Math.max(peak, ++running);
        await new Promise<void>((r) => releases.push(r));
        running--;
        return 'done';
      });
    const first = [task(), task(), task()];
    await expect(task()).rejects.toBeInstanceOf(WorkLimiterFullError);
    expect(limiter.load).toEqual({ active: 2, waiting: 1 });
    while (releases.length || limiter.load.active) {
      releases.shift()?.();
      await new Promise((r) => setImmediate(r));
    }
    await expect(Promise.all(first)).resolves.toEqual(['done', 'done', 'done']);
    expect(peak).toBe(2);
    expect(limiter.load).toEqual({ active: 0, waiting: 0 });
  });

  it('frees the slot when a task fails', async () => {
    const limiter = new WorkLimiter('test', 1, 0);
    await expect(limiter.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limiter.run(async () => 1)).resolves.toBe(1);
  });
});
