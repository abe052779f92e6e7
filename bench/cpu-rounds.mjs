// Interleaved rounds of request cases, with the CPU each case costs per request
// (docs/benchmarks.md, "How to run"): the intake benches read both.
import { cpuOf, median, postgresCpu, profiled, requestsPerSecond } from './bench-helpers.mjs';

/**
 * Runs every case for `duration` seconds a round, the cases back to back within a round, and
 * adds up what the API process and PostgreSQL spent on each case: CPU per request is what a busy
 * shared machine changes least. `before(key)` runs ahead of a case's window and `after(key, rps,
 * round)` behind it, outside the measured CPU. Returns each case's rates by round, the median
 * rate, and its CPU per request in µs ({ api, pg }).
 */
export async function roundsWithCpu(cases, { rounds, duration, connections, apiPid, postmaster, before, after }) {
  const results = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const spent = Object.fromEntries(Object.keys(cases).map((k) => [k, { api: 0, pg: 0, n: 0 }]));
  for (let r = 0; r < rounds; r++) {
    for (const [key, c] of Object.entries(cases)) {
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
