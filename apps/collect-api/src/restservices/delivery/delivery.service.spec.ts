import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mockOf } from '@collect/testing';
import { loadCollectConfig } from '../../config/collect-config.js';
import type { FormEntity } from '../../forms/form.entity.js';
import type { FormsRepository } from '../../forms/forms.repository.js';
import type { SubmissionsService } from '../../submissions/submissions.service.js';
import type { SubmissionEntity } from '../../submissions/submission.entity.js';
import { DeliveryAttemptLog } from './delivery-attempt-log.js';
import type { EnvelopeForwarding } from '../../encrypted-submissions/envelope-forwarding.js';
import type { DeliveryOutbox } from './delivery-outbox.js';
import { DeliveryService } from './delivery.service.js';
import { DestinationGate } from '../destinations/destination-gate.js';
import { NetworkGuard } from '../destinations/network-guard.js';
import type { AttemptStatus, RestServiceEntity } from '../restservice.entities.js';
import type { ClaimedDelivery, RestServicesRepository } from '../restservices.repository.js';

/** Plaintext payloads go as they are (docs/encryption.md, "Forwarding"). */
const plaintext = mockOf<EnvelopeForwarding>({ verdict: async () => ({ action: 'as-is' }) });
import type { SheetsService } from '../sheets/sheets.service.js';
import { ServiceCredentials } from '../service-credentials.js';

/**
 * Retry classification of DeliveryService with its repository and the submission loader mocked.
 * The receiver is a real local HTTP server (outside the platform), answering what each test
 * scripts; the destination gate is the real one on the test run's Redis.
 */
const config = loadCollectConfig({
  FORWARD_MAX_ATTEMPTS: '3', FORWARD_BACKOFF_BASE_MS: '1000', FORWARD_BACKOFF_FACTOR: '2', FORWARD_TIMEOUT_MS: '2000',
  REDIS_URL: process.env.TEST_REDIS_URL!, REDIS_PREFIX: `delivery-spec-${process.pid}-${Date.now()}`,
});
const gate = new DestinationGate(config);
let receiver: Server;
let answer: { status: number; headers?: Record<string, string> };
let url: string;
let hits = 0;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => res.writeHead(answer.status, answer.headers ?? {}).end('answer'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  for (const sut of suts) sut.onApplicationShutdown();
  gate.onModuleDestroy();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

interface Recorded {
  status: AttemptStatus;
  retryAt: Date | null;
  statusCode: number | null;
}

/** The service under test, with a row on its `attempts`-th attempt and a live submission unless `deleted`. */
let serviceIds = 0;
const suts: DeliveryService[] = [];

/** A fresh service id per call: the real gate keeps a destination's Retry-After pause in Redis. */
function makeSut(opts: { attempts: number; deleted?: boolean; active?: boolean }) {
  const serviceId = ++serviceIds;
  const service = { id: serviceId, name: 'generic_json', serviceUrl: url, active: opts.active ?? true, inactiveReason: null, authTokenEnc: null, signingSecretEnc: null, basicAuthEnc: null, headersEnc: null, rateLimitPerMinute: null, options: {} } as unknown as RestServiceEntity;
  // A row written before payload snapshots existed (snapshot null): the live submission is loaded.
  const row = {
    id: 9, deliveryId: '7d3c1c2e-0000-4000-8000-000000000000', serviceId, submissionId: 40, event: 'created', attempts: opts.attempts, attemptBase: 0,
    snapshot: null, body: null, replayId: null, submissionGone: false, hasSuccessor: false, serviceVersion: 'v1',
  } as unknown as ClaimedDelivery;
  const recorded: Recorded[] = [];
  const repo = mockOf<RestServicesRepository>({
    claimDue: async () => [row],
    findService: async () => service,
    recordAttempts: async (list) => void recorded.push(...list.map((a) => ({ status: a.status, retryAt: a.retryAt, statusCode: a.statusCode }))),
    keepBody: async () => undefined,
    deactivate: async () => undefined,
    release: async () => undefined,
  });
  const submissions = mockOf<SubmissionsService>({
    loadSubmissionJson: async () => (opts.deleted ? null : { json: { _id: 40 }, submission: { id: 40 } as SubmissionEntity, form: { id: 1 } as FormEntity }),
  });
  const sut = new DeliveryService(repo, submissions, mockOf<SheetsService>(), mockOf<FormsRepository>(), mockOf<DeliveryOutbox>(), new DeliveryAttemptLog(repo), gate, plaintext, new ServiceCredentials(config), new NetworkGuard(['127.0.0.0/8']), config);
  suts.push(sut);
  return { sut, repo, recorded };
}

/** The real attempt log with a linger that never runs out: whether ends gather depends only on the claim. */
class PatientLog extends DeliveryAttemptLog {
  protected override lingerMs = 3_600_000;
}

/** One relay pass as the worker runs it: claim the due row, send it, wait for its attempt to end. */
async function sendOne(sut: DeliveryService): Promise<void> {
  await sut.sendDue(1, new AbortController().signal);
  await sut.drain();
}

describe('DeliveryService: retry classification (repository mocked, real receiver)', () => {
  it('records a 2xx as success, with no retry', async () => {
    answer = { status: 204 };
    const { sut, recorded } = makeSut({ attempts: 1 });
    await sendOne(sut);
    expect(recorded).toEqual([{ status: 'success', retryAt: null, statusCode: 204 }]);
  });

  it('retries a 503 with exponential backoff while attempts remain, then fails', async () => {
    answer = { status: 503 };
    const first = makeSut({ attempts: 1 });
    const before = Date.now();
    await sendOne(first.sut);
    expect(first.recorded).toMatchObject([{ status: 'retrying', statusCode: 503 }]);
    const wait = first.recorded[0].retryAt!.getTime() - before;
    // Attempt 1: 1000 ms ±25 % jitter.
    expect(wait).toBeGreaterThanOrEqual(750);
    expect(wait).toBeLessThan(1250 + 1000);
    const last = makeSut({ attempts: 3 });
    await sendOne(last.sut);
    expect(last.recorded).toEqual([{ status: 'failed', retryAt: null, statusCode: 503 }]);
  });

  it('waits at least what Retry-After asks on a 429', async () => {
    answer = { status: 429, headers: { 'Retry-After': '120' } };
    const { sut, recorded } = makeSut({ attempts: 1 });
    const before = Date.now();
    await sendOne(sut);
    expect(recorded).toMatchObject([{ status: 'retrying', statusCode: 429 }]);
    expect(recorded[0].retryAt!.getTime() - before).toBeGreaterThanOrEqual(119_000);
  });

  it('fails another 4xx at once, and deactivates the service on 410 Gone', async () => {
    answer = { status: 400 };
    const bad = makeSut({ attempts: 1 });
    await sendOne(bad.sut);
    expect(bad.recorded).toEqual([{ status: 'failed', retryAt: null, statusCode: 400 }]);
    expect(bad.repo.mock.callsOf('deactivate')).toEqual([]);
    answer = { status: 410 };
    const gone = makeSut({ attempts: 1 });
    await sendOne(gone.sut);
    expect(gone.recorded).toEqual([{ status: 'failed', retryAt: null, statusCode: 410 }]);
    expect(gone.repo.mock.callsOf('deactivate')).toHaveLength(1);
  });

  it('skips a submission deleted before the send, and holds the row of a service made inactive, without a request', async () => {
    answer = { status: 500 };
    hits = 0;
    const deleted = makeSut({ attempts: 1, deleted: true });
    await sendOne(deleted.sut);
    expect(deleted.recorded).toEqual([{ status: 'skipped', retryAt: null, statusCode: null }]);
    const inactive = makeSut({ attempts: 1, active: false });
    await sendOne(inactive.sut);
    // Held, not an attempt: `active: true` resumes it (docs/restservices.md).
    expect(inactive.recorded).toEqual([]);
    expect(inactive.repo.mock.callsOf('release')).toEqual([[9, 'held']]);
    expect(hits).toBe(0);
  });

  it('writes the attempt ends of one claim in one statement', async () => {
    answer = { status: 200 };
    const { repo } = makeSut({ attempts: 1 });
    const [row] = await repo.claimDue(1, 0);
    const rows = [1, 2, 3].map((id) => ({ ...row, id, deliveryId: `7d3c1c2e-0000-4000-8000-00000000000${id}` }));
    const statements: number[][] = [];
    const claimRepo = mockOf<RestServicesRepository>({
      claimDue: async () => rows,
      findService: () => repo.findService(row.serviceId),
      recordAttempts: async (list) => void statements.push(list.map((a) => a.deliveryRowId)),
    });
    const sut = new DeliveryService(claimRepo, mockOf<SubmissionsService>({ loadSubmissionJson: async () => ({ json: { _id: 40 }, submission: { id: 40 } as SubmissionEntity, form: { id: 1 } as FormEntity }) }), mockOf<SheetsService>(), mockOf<FormsRepository>(), mockOf<DeliveryOutbox>(), new PatientLog(claimRepo), gate, plaintext, new ServiceCredentials(config), new NetworkGuard(['127.0.0.0/8']), config);
    suts.push(sut);
    await sut.sendDue(3, new AbortController().signal);
    await sut.drain();
    expect(statements).toHaveLength(1);
    expect(statements[0].sort()).toEqual([1, 2, 3]);
  });
});
