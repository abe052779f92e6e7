// The machine a bench ran on, printed beside every table of figures: the ratios cancel the
// machine's speed, not its kind, its core count or what else ran on it (docs/benchmarks.md,
// "How to run").
import { readFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';

/** The CPU model as /proc/cpuinfo names it (os.cpus() elsewhere), or 'unknown CPU'. */
export function cpuModel() {
  try {
    const m = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (m) return m[1].trim();
  } catch {
    // not Linux: fall through
  }
  return cpus()[0]?.model?.trim() || 'unknown CPU';
}

/** `machine: <CPU model>, <n> cores, load average <1, 5, 15 min>`: not a result line (bench-results.mjs). */
export function machineLine() {
  const cores = availableParallelism();
  return `machine: ${cpuModel()}, ${cores} core${cores === 1 ? '' : 's'}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
}
