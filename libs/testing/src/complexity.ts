import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full collection before each timed run, so every run starts from the same heap: no run pays
 * for the garbage of the one before it, nor for old-generation marking that an earlier run
 * started. A young-generation collection alone left the XForm rows between 6 and 10 on one
 * quiet machine and at 8.3 (best of three) in a CI run; with a full one they measured 3.8 to 4.4,
 * also with both cores busy (docs/security.md, "Parsers of user input").
 */
export const collectGarbage: () => void = (() => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options?: { type: 'major' | 'minor' }) => void;
  return () => gc({ type: 'major' });
})();

/** How the work of a parser grows with its input, measured in one run (docs/security.md). */
export interface GrowthMeasurement {
  /** Input size of the small run (what `make` was given). */
  n: number;
  factor: number;
  /** Median CPU milliseconds of this process for the small and the large input. */
  smallMs: number;
  largeMs: number;
  /** largeMs / smallMs: about `factor` for a linear parser, `factor`² for a quadratic one. */
  ratio: number;
}

export interface GrowthOptions {
  /** Size of the small input; pick it so one run takes some milliseconds. */
  n: number;
  /** The large input is `factor` times the small one (default 4). */
  factor?: number;
  /** Runs per size; the median counts (default 7). */
  repetitions?: number;
}

/**
 * Times `run` on an input of size n and one of size factor·n, alternating the two, and answers
 * the ratio of their medians. The time is the CPU time of this process (process.cpuUsage, all
 * its threads), not the wall clock: on a machine busy with other work a run waits for a core
 * without using one, and that waiting grows with the length of the run, not with the work.
 * A ratio of sizes measured in the same process, never a time bound: with factor 4 a linear
 * parser stays near 4 and a quadratic one near 16, so a bound of 8 tells them apart.
 */
export async function measureGrowth<I>(make: (n: number) => I, run: (input: I) => unknown, options: GrowthOptions): Promise<GrowthMeasurement> {
  const factor = options.factor ?? 4;
  const repetitions = options.repetitions ?? 7;
  const small = make(options.n);
  const large = make(options.n * factor);
  const time = async (input: I) => {
    collectGarbage();
    const start = process.cpuUsage();
    await run(input);
    const used = process.cpuUsage(start);
    return (used.user + used.system) / 1000;
  };
  // Warm-up: compile the parser's hot paths before anything is counted.
  await time(small);
  await time(large);
  const smallRuns: number[] = [];
  const largeRuns: number[] = [];
  for (let i = 0; i < repetitions; i++) {
    smallRuns.push(await time(small));
    largeRuns.push(await time(large));
  }
  const smallMs = median(smallRuns);
  const largeMs = median(largeRuns);
  return { n: options.n, factor, smallMs, largeMs, ratio: largeMs / Math.max(smallMs, 1e-3) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
