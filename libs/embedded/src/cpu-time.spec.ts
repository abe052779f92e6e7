import { spawn } from 'node:child_process';
import { childClock, cpuTimeMs } from './cpu-time.js';
import { waitFor } from './ports.js';

describe('deadlines counted in a process\'s own CPU time', () => {
  it('reads a child\'s CPU time: one that spins uses more than one that sleeps beside it; a gone process has none, and its clock keeps its last reading', async () => {
    const spinner = spawn(process.execPath, ['-e', 'for (;;) {}']);
    const sleeper = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    const spin = childClock(spinner.pid, 60_000);
    const sleep = childClock(sleeper.pid, 60_000);
    try {
      // Node's own start costs CPU in both; the spinner then keeps going, the sleeper does not.
      await waitFor(async () => spin.spentMs() >= 1_500 + sleep.spentMs(), 120_000, 'the spinner to pull ahead');
      expect(cpuTimeMs(spinner.pid)!).toBeGreaterThan(cpuTimeMs(sleeper.pid)!);
    } finally {
      spinner.kill('SIGKILL');
      sleeper.kill('SIGKILL');
    }
    await Promise.all([spinner, sleeper].map((c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(null) : c.once('exit', r)))));
    expect(cpuTimeMs(sleeper.pid)).toBeNull();
    expect(cpuTimeMs(undefined)).toBeNull();
    // The sleeper's clock, read after it has gone, is the little CPU its start took: not the wall
    // time since it started, which the spinner's 1.5 s of CPU has passed.
    expect(sleep.spentMs()).toBeLessThan(1_000);
  });

  it('waitFor gives up when its clock has spent the budget, or at the wall cap, whichever comes first', async () => {
    let ticks = 0;
    const budgetClock = { spentMs: () => ++ticks * 100, overWallCap: () => false };
    await expect(waitFor(async () => false, 1_000, 'never', budgetClock)).rejects.toThrow(/timed out after 1000 ms waiting for never/);
    expect(ticks).toBeGreaterThanOrEqual(10);
    let polls = 0;
    const cappedClock = { spentMs: () => 0, overWallCap: () => ++polls > 3 };
    await expect(waitFor(async () => false, 1_000, 'never', cappedClock)).rejects.toThrow(/timed out/);
    let calls = 0;
    await waitFor(async () => ++calls === 2, 1_000, 'the second call', { spentMs: () => 0, overWallCap: () => false });
    expect(calls).toBe(2);
  });
});
