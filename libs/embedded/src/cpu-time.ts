import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on every Linux build Node supports). */
const USER_HZ = 100;

/**
 * CPU time in ms that process `pid` has used (user + system), or null where /proc cannot tell
 * (not Linux, or the process is gone). A deadline counted in a process's own CPU time holds on
 * a busy machine, where its wall time stretches with every other process that runs beside it
 * (docs/operations.md, "Checks in CI").
 */
export function cpuTimeMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses): state is the first,
    // utime the 12th and stime the 13th (proc(5): fields 14 and 15).
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / USER_HZ : null;
  } catch {
    return null;
  }
}

/**
 * How long a wait for a child process has lasted, as a deadline should count it: the child's own
 * CPU time where /proc tells it, else wall time. `wallCapMs` bounds the wall time as well, for a
 * child that hangs without using CPU.
 */
export function childClock(pid: number | undefined, wallCapMs: number): { spentMs(): number; overWallCap(): boolean } {
  const started = Date.now();
  const cpuAtStart = cpuTimeMs(pid);
  // Once the child has gone, /proc no longer tells: its last reading stands (the caller sees the
  // exit next), rather than wall time since the start, which a slow start may already exceed.
  let lastCpu = cpuAtStart;
  return {
    spentMs: () => {
      if (cpuAtStart === null) return Date.now() - started;
      lastCpu = cpuTimeMs(pid) ?? lastCpu;
      return lastCpu! - cpuAtStart;
    },
    overWallCap: () => Date.now() - started > wallCapMs,
  };
}
