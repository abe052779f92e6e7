import { mockOf } from '@collect/testing';
import { DeliveryAttemptLog } from './delivery-attempt-log.js';
import type { AttemptRecord, RestServicesRepository } from '../restservices.repository.js';

/**
 * The attempt log's batches with the repository mocked: which ends go in one statement. The
 * linger is set per test (never elapsing, or elapsed at once) so that no outcome depends on
 * how fast the machine runs the test.
 */
class Log extends DeliveryAttemptLog {
  constructor(repo: RestServicesRepository, lingerMs: number) {
    super(repo);
    this.lingerMs = lingerMs;
  }
}

const NEVER = 3_600_000;

function entry(deliveryRowId: number): AttemptRecord {
  return { deliveryRowId, serviceId: 1, attempt: 1, status: 'success', statusCode: 200, latencyMs: 1, error: null, responseExcerpt: null, event: 'created', retryAt: null };
}

/** A repository whose statements wait until the test lets them finish; `calls` lists each statement's row ids. */
function makeRepo() {
  const calls: number[][] = [];
  let release: () => void = () => undefined;
  const repo = mockOf<RestServicesRepository>({
    recordAttempts: async (list) => {
      calls.push(list.map((a) => a.deliveryRowId));
      await new Promise<void>((resolve) => (release = resolve));
    },
  });
  return { repo, calls, finish: () => release() };
}

/** Lets every pending promise callback and immediate run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('DeliveryAttemptLog: group commit of attempt ends', () => {
  it('writes the ends of one claim in one statement, and completes none before it is written', async () => {
    const { repo, calls, finish } = makeRepo();
    const log = new Log(repo, NEVER);
    log.expect([1, 2, 3]);
    let completed = 0;
    const first = log.record(entry(1)).then(() => completed++);
    await settle();
    // The claim's other two sends have not ended: nothing written yet.
    expect(calls).toEqual([]);
    const rest = [log.record(entry(2)), log.record(entry(3))].map((p) => p.then(() => completed++));
    await settle();
    expect(calls).toEqual([[1, 2, 3]]);
    expect(completed).toBe(0);
    finish();
    await Promise.all([first, ...rest]);
    expect(calls).toEqual([[1, 2, 3]]);
    expect(completed).toBe(3);
  });

  it('does not wait for a send of the claim that ended without an entry', async () => {
    const { repo, calls, finish } = makeRepo();
    const log = new Log(repo, NEVER);
    log.expect([1, 2]);
    const first = log.record(entry(1));
    await settle();
    expect(calls).toEqual([]);
    log.ended(2); // released (rate limit) or finished without an attempt
    await settle();
    expect(calls).toEqual([[1]]);
    finish();
    await first;
  });

  it('writes an attempt with nothing else in flight at once', async () => {
    const { repo, calls, finish } = makeRepo();
    const log = new Log(repo, NEVER);
    log.expect([7]); // a claim of one row
    const lone = log.record(entry(7));
    const unclaimed = log.record(entry(8)); // not from a claim (a spreadsheet replay's follower)
    await settle();
    expect(calls).toEqual([[7]]);
    finish();
    await lone;
    await settle();
    expect(calls).toEqual([[7], [8]]);
    finish();
    await unclaimed;
  });

  it('writes once the linger passed though the claim has sends in flight', async () => {
    const { repo, calls, finish } = makeRepo();
    const log = new Log(repo, 0);
    log.expect([1, 2, 3]);
    const first = log.record(entry(1));
    await settle();
    expect(calls).toEqual([[1]]);
    finish();
    await first;
  });

  it('gathers the ends that come while a statement runs into the next one', async () => {
    const { repo, calls, finish } = makeRepo();
    const log = new Log(repo, 0);
    const first = log.record(entry(1));
    await settle();
    const later = [log.record(entry(2)), log.record(entry(3))];
    await settle();
    expect(calls).toEqual([[1]]);
    finish();
    await first;
    await settle();
    expect(calls).toEqual([[1], [2, 3]]);
    finish();
    await Promise.all(later);
  });
});
