import type { ChildProcess } from 'node:child_process';

/**
 * Every child we spawn is registered here and killed when this process exits, however it
 * exits (an exit hook, an uncaught error, process.exit from a signal handler): 'exit' is the
 * one hook that always fires.
 */
const children = new Set<ChildProcess>();
let hooked = false;

export function trackChild(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const c of children) {
        try {
          c.kill('SIGKILL');
        } catch {
          /* already gone */
        }
      }
    });
  }
  return child;
}

export function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve(child.exitCode);
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
    child.kill(signal);
  });
}
