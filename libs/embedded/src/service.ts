import { spawn, type ChildProcess } from 'node:child_process';
import { stopChild, trackChild } from './children.js';
import { childClock } from './cpu-time.js';
import { GiveUp, waitFor } from './ports.js';

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts a built service (`node <entry>`) as a child process and waits until its
 * `/health/ready` answers 200. `timeoutMs` counts the child's own CPU time (wall time where
 * /proc cannot tell), so a start on a busy machine, slower by the wall clock, is not taken for a
 * hung one; a child that uses no CPU still gives up after SERVICE_START_WALL_CAP_MS (or four
 * times `timeoutMs`, when longer). Output is kept for assertions and failure messages.
 * `nodeArgs` go before the entry (benchmarks: `--cpu-prof`, which NODE_OPTIONS does not allow).
 * `keepOutput`: at most that many of the latest characters are kept (benchmarks run the
 * services at their default log level, a line per request, for minutes).
 */
/** The wall time a service start may take at most, whatever CPU it used (docs/operations.md, "Checks in CI"). */
export const SERVICE_START_WALL_CAP_MS = 150_000;

export async function startServiceProcess(entry: string, env: Record<string, string>, port: number, timeoutMs = 30_000, nodeArgs: string[] = [], keepOutput = Infinity): Promise<ServiceProcess> {
  const child = trackChild(spawn(process.execPath, [...nodeArgs, entry], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  const keep = (d: Buffer) => {
    out += d.toString();
    if (out.length > 2 * keepOutput) out = out.slice(-keepOutput);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => {
      if (child.exitCode !== null) throw new GiveUp(`exited with ${child.exitCode}: ${out.slice(-2000)}`);
      const res = await fetch(`${url}/health/ready`);
      return res.status === 200;
    }, timeoutMs, `${entry} to become ready`, childClock(child.pid, Math.max(SERVICE_START_WALL_CAP_MS, 4 * timeoutMs)));
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${String(err)}\n--- output ---\n${out.slice(-4000)}`);
  }
  return { child, url, output: () => out, stop: (signal = 'SIGTERM') => stopChild(child, signal, 15_000) };
}
