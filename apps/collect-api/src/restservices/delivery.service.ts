import { Inject, Injectable, Logger } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { OnJob } from '../jobs/on-job.decorator.js';
import type { JobData } from '../jobs/job.types.js';
import { SubmissionsService } from '../submissions/submissions.service.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { DestinationGate } from './destination-gate.js';
import { ServiceCredentials, withServiceAuth } from './service-credentials.js';
import { backoffMs, deliveryHeaders, isRetryable, sendOnce, type SendResult } from './delivery-sender.js';
import { FORWARDERS } from './forwarders/index.js';
import { NETWORK_GUARD } from './restservices.tokens.js';
import type { NetworkGuard } from './network-guard.js';
import type { AttemptStatus, DeliveryEntity, RestServiceEntity } from './restservice.entities.js';
import { RestServicesRepository } from './restservices.repository.js';
import { SheetsService } from './sheets/sheets.service.js';

/**
 * One delivery attempt of one outbox row, run by the Bull worker. The database row decides
 * (claim with a lease), so a job that runs twice (stalled job, re-queued after a crash) sends
 * at most once per claim, and every send of a delivery carries the same X-Delivery-Id.
 */
@Injectable()
export class DeliveryService {
  private readonly logger = new Logger(DeliveryService.name);
  private readonly credentials: ServiceCredentials;

  constructor(
    private readonly repo: RestServicesRepository,
    private readonly submissions: SubmissionsService,
    private readonly sheets: SheetsService,
    private readonly gate: DestinationGate,
    @Inject(NETWORK_GUARD) private readonly guard: NetworkGuard,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {
    this.credentials = new ServiceCredentials(config.COLLECT_SECRET_KEY);
  }

  /** A row in flight stays leased a little longer than the request may take. */
  get sendingLeaseMs(): number {
    return this.config.FORWARD_TIMEOUT_MS * 2 + Math.min(5_000, this.config.FORWARD_TIMEOUT_MS);
  }

  @OnJob('deliver')
  async deliver({ rowId }: JobData<'deliver'>): Promise<void> {
    const row = await this.repo.claimForSending(rowId, this.sendingLeaseMs);
    if (!row) return; // finished already, or another worker holds it
    const service = await this.repo.findService(row.serviceId);
    if (!service) return void (await this.repo.finish(row.id, 'skipped'));
    // Switched off (by a user, a 410 or auto-disable): the row waits for `active: true` (docs/restservices.md).
    if (!service.active) return this.repo.release(row.id, 'held');
    const forwarder = FORWARDERS[service.name];
    if (service.name !== 'spreadsheet' && !forwarder) return this.record(row, service, 'skipped', { statusCode: null, latencyMs: 0, error: 'no forwarder for this service', responseExcerpt: null, retryAfterMs: null });
    if (service.name === 'spreadsheet') return this.deliverToSheet(row, service);

    // The destination's rate limit and any Retry-After it gave: a slot further out sends the row
    // back to the outbox (not an attempt); a near one is waited for right before the request.
    const slot = await this.gate.reserve(service);
    if (!slot.send) return this.repo.release(row.id, slot.retryAt);

    // §6.2: reload right before sending; a deleted (soft or hard) instance is never forwarded.
    const loaded = await this.submissions.loadSubmissionJson(row.submissionId);
    if (!loaded) return this.record(row, service, 'skipped', { statusCode: null, latencyMs: 0, error: 'submission deleted before delivery', responseExcerpt: null, retryAfterMs: null });

    const secrets = this.credentials.secrets(service);
    // Extra headers and Basic credentials go on at send time only (service-credentials.ts).
    const request = withServiceAuth(forwarder!.build({ service, authToken: secrets.authToken, submission: loaded.submission, form: loaded.form, json: loaded.json, event: row.event }), secrets);
    const headers = deliveryHeaders(request, { deliveryId: row.deliveryId, attempt: row.attempts, event: row.event, signingSecret: secrets.signingSecret });
    const gate = await this.gate.wait(service, slot);
    if (!gate.send) return this.repo.release(row.id, gate.retryAt);
    const result = await sendOnce(request, headers, this.guard, this.config.FORWARD_TIMEOUT_MS);
    deliveryMetrics.latency.observe({ service: service.name }, result.latencyMs / 1000);
    await this.gate.settle(service, result);
    if (service.name === 'dataset_service') await this.storeDatasetId(service, row.submissionId, result);
    return this.classify(row, service, result);
  }

  /** 2xx success; 410 deactivates; 408/425/429/5xx/transport errors retry while attempts remain; else failed. */
  private async classify(row: DeliveryEntity, service: RestServiceEntity, result: SendResult): Promise<void> {
    if (result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300) return this.record(row, service, 'success', result);
    if (result.statusCode === 410) {
      await this.repo.deactivate(service.id, `The receiver answered 410 Gone at ${new Date().toISOString()}.`);
      return this.record(row, service, 'failed', result);
    }
    const attemptsLeft = row.attemptBase + this.config.FORWARD_MAX_ATTEMPTS - row.attempts;
    if (isRetryable(result.statusCode) && !result.error?.includes('refused:') && attemptsLeft > 0) {
      const { FORWARD_BACKOFF_BASE_MS: base, FORWARD_BACKOFF_FACTOR: factor, FORWARD_BACKOFF_MAX_MS: max } = this.config;
      const delay = Math.min(max, Math.max(backoffMs(row.attempts - row.attemptBase, base, factor, max), result.retryAfterMs ?? 0));
      return this.record(row, service, 'retrying', result, new Date(Date.now() + delay));
    }
    return this.record(row, service, 'failed', result);
  }

  private async deliverToSheet(row: DeliveryEntity, service: RestServiceEntity): Promise<void> {
    const loaded = row.event === 'deleted' ? null : await this.submissions.loadSubmissionJson(row.submissionId);
    const gate = await this.gate.admit(service);
    if (!gate.send) return this.repo.release(row.id, gate.retryAt);
    const result = await this.sheets.deliver(row, service, loaded);
    if (result !== 'skip') await this.gate.settle(service, result);
    if (result === 'skip') return this.record(row, service, 'skipped', { statusCode: null, latencyMs: 0, error: loaded || row.event === 'deleted' ? 'no sheet row for this submission' : 'submission deleted before delivery', responseExcerpt: null, retryAfterMs: null });
    return this.classify(row, service, result);
  }

  /**
   * `_bamboo_dataset_id` (docs/restservices.md): the service's configured `dataset_id`, or the
   * `id` the dataset service answered, kept on the submission for later payloads and the data API.
   */
  private async storeDatasetId(service: RestServiceEntity, submissionId: number, result: SendResult): Promise<void> {
    if (result.statusCode === null || result.statusCode < 200 || result.statusCode >= 300) return;
    const id = service.options.dataset_id || datasetIdOf(result.responseExcerpt);
    if (id) await this.submissions.recordBambooDatasetId(submissionId, id);
  }

  private async record(row: DeliveryEntity, service: RestServiceEntity, status: AttemptStatus, r: SendResult, retryAt?: Date): Promise<void> {
    await this.repo.recordAttempt(
      { deliveryRowId: row.id, serviceId: service.id, attempt: row.attempts, status, statusCode: r.statusCode, latencyMs: r.latencyMs, error: r.error, responseExcerpt: r.responseExcerpt, event: row.event },
      { status, retryAt: retryAt ?? null },
    );
    deliveryMetrics.attempts.inc({ service_id: String(service.id), service: service.name, outcome: status });
    if (status === 'failed') this.logger.warn({ serviceId: service.id, deliveryId: row.deliveryId, statusCode: r.statusCode, error: r.error }, 'delivery failed');
  }
}

/** The `id` of a JSON object answer (a string or an integer), or null. */
export function datasetIdOf(body: string | null): string | null {
  if (!body) return null;
  try {
    const parsed = JSON.parse(body) as unknown;
    const id = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as { id?: unknown }).id : undefined;
    if (typeof id === 'string' && id.length > 0 && id.length <= 100) return id;
    if (typeof id === 'number' && Number.isSafeInteger(id)) return String(id);
  } catch {
    // not JSON: no id
  }
  return null;
}
