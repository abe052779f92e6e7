// Interleaved rounds of request cases, with the CPU each case costs per request
// (docs/benchmarks.md, "How to run"): the intake benches read both.
import { cpuOf, median, postgresCpu, profiled, requestsPerSecond } from './bench-helpers.mjs';

/**
 * Runs every case for `duration` seconds a round, the cases back to back within a round, and
 * adds up what the API process and PostgreSQL spent on each case: CPU per request is what a busy
 * shared machine changes least. `before(key)` runs ahead of a case's window and `after(key, rps,
 * round)` behind it, outside the measured CPU. `rotate`: round r starts at case r (modulo their
 * number), so no case always runs first, or always right after the same one (a window pays for
 * the writeback of the files the window before it wrote). Returns each case's rates by round,
 * the median rate, and its CPU per request in µs ({ api, pg }).
 */
export async function roundsWithCpu(cases, { rounds, duration, connections, apiPid, postmaster, before, after, rotate = false }) {
  const results = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const spent = Object.fromEntries(Object.keys(cases).map((k) => [k, { api: 0, pg: 0, n: 0 }]));
  const order = Object.entries(cases);
  for (let r = 0; r < rounds; r++) {
    const shift = rotate ? r % order.length : 0;
    for (const [key, c] of [...order.slice(shift), ...order.slice(0, shift)]) {
      before?.(key);
      const start = { api: cpuOf(apiPid), pg: postgresCpu(postmaster) };
      const rps = await profiled(key, () => requestsPerSecond(c, duration, connections));
      spent[key].api += cpuOf(apiPid) - start.api;
      spent[key].pg += postgresCpu(postmaster) - start.pg;
      spent[key].n += rps * duration;
      results[key].push(rps);
      after?.(key, rps, r);
    }
  }
  const rate = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
  const cpu = Object.fromEntries(Object.entries(spent).map(([k, { api, pg, n }]) => [k, { api: api / n, pg: pg / n }]));
  for (const [key, rps] of Object.entries(rate)) {
    console.log(`${cases[key].label}: ${Math.round(rps)} req/s (median of ${rounds} x ${duration}s, ${connections} connections); CPU per request: API ${Math.round(cpu[key].api)} µs, PostgreSQL ${Math.round(cpu[key].pg)} µs`);
  }
  return { results, rate, cpu };
}

/**
 * The median of the rounds' own ratios of case `a` to case `b`, printing each: a round measures a
 * case and its baseline close together, so a slower phase of the shared machine weighs on both
 * sides of its ratio.
 */
export function pairedRatio(results, rate, a, b) {
  const each = results[a].map((rps, r) => rps / results[b][r]);
  console.log(`${a} ÷ ${b} per round: ${each.map((x) => x.toFixed(2)).join(', ')}; ratio of the medians ${(rate[a] / rate[b]).toFixed(2)}`);
  return median(each);
}
