// Small pieces every benchmark needs. Rounds are interleaved and the median of each case is
// used, because the machine is shared and load comes and goes.
import autocannon from 'autocannon';

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Mean requests/s of one autocannon run; any answer other than `expect` fails the benchmark. */
export async function requestsPerSecond({ url, method = 'GET', headers, setupRequest, expect = 200 }, seconds, connections) {
  const result = await autocannon({ url, method, headers, connections, duration: seconds, ...(setupRequest ? { requests: [{ setupRequest }] } : {}) });
  const unexpected = result.statusCodeStats
    ? Object.entries(result.statusCodeStats).filter(([code]) => Number(code) !== expect).reduce((n, [, s]) => n + s.count, 0)
    : result.non2xx;
  const bad = result.errors + unexpected;
  if (bad > 0) throw new Error(`${method} ${url}: ${bad} unexpected answers of ${result.requests.total} (${JSON.stringify(result.statusCodeStats)})`);
  return result.requests.average;
}

/** The fetch Response when its status is `status`; otherwise the benchmark stops with the body. */
export async function must(promise, status) {
  const res = await promise;
  if (res.status !== status) throw new Error(`${res.url}: expected ${status}, got ${res.status} ${await res.text()}`);
  return res;
}
