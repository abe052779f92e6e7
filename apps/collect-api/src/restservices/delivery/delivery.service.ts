import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { TtlCache } from '../../cache/ttl-cache.js';
import { CollectConfig } from '../../config/collect-config.js';
import { EnvelopeForwarding } from '../../encrypted-submissions/envelope-forwarding.js';
import type { FormEntity } from '../../forms/form.entity.js';
import { FormsRepository } from '../../forms/forms.repository.js';
import type { SubmissionJson } from '../../submissions/submission-json.js';
import type { SubmissionEntity } from '../../submissions/submission.entity.js';
import { SubmissionsService } from '../../submissions/submissions.service.js';
import { DeliveryAttemptLog } from './delivery-attempt-log.js';
import { DeliveryOutbox } from './delivery-outbox.js';
import { DestinationAgents } from '../destinations/destination-agents.js';
import { snapshotJson, XML_SERVICES } from './delivery-snapshot.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { DestinationGate, type GateDecision } from '../destinations/destination-gate.js';
import { ServiceCredentials, withServiceAuth } from '../service-credentials.js';
import { backoffMs, deliveryHeaders, isRetryable, sendOnce, type SendResult } from './delivery-sender.js';
import { FORWARDERS, type OutgoingRequest } from '../forwarders/index.js';
import { entityRequest, type EntitySnapshot } from '../forwarders/entity-json.forwarder.js';
import { isEntityEvent } from './delivery-events.js';
import { NETWORK_GUARD } from '../restservices.tokens.js';
import type { NetworkGuard } from '../destinations/network-guard.js';
import type { AttemptStatus, RestServiceEntity } from '../restservice.entities.js';
import { RestServicesRepository, type ClaimedDelivery } from '../restservices.repository.js';
import { SendSlots } from './send-slots.js';
import { SHEET_APPEND_BATCH, SheetsService } from '../sheets/sheets.service.js';

const FORM_CACHE_MS = 5_000;

/**
 * One delivery attempt of each due outbox row, in the worker process: the relay
 * (delivery-relay.ts) calls sendDue when rows may be due. The database row decides (claim with
 * a lease, SKIP LOCKED), so two workers never send one claim twice, and every send of a
 * delivery carries the same X-Delivery-Id. Rows are claimed together (one statement for as
 * many as there are free send slots) and sent concurrently, at most FORWARD_CONCURRENCY at once
 * in this process (docs/restservices.md, "Connections and batches").
 */
@Injectable()
export class DeliveryService implements OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryService.name);
  private readonly agents: DestinationAgents;
  private readonly serviceCache = new Map<number, { version: string; service: RestServiceEntity }>();
  private readonly formCache = new TtlCache<FormEntity>(FORM_CACHE_MS, 1_000);
  private readonly slots: SendSlots;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly repo: RestServicesRepository,
    private readonly submissions: SubmissionsService,
    private readonly sheets: SheetsService,
    private readonly forms: FormsRepository,
    private readonly outbox: DeliveryOutbox,
    private readonly attemptLog: DeliveryAttemptLog,
    private readonly gate: DestinationGate,
    private readonly envelopes: EnvelopeForwarding,
    private readonly credentials: ServiceCredentials,
    @Inject(NETWORK_GUARD) private readonly guard: NetworkGuard,
    private readonly config: CollectConfig,
  ) {
    this.agents = new DestinationAgents(config.FORWARD_CONCURRENCY_PER_DESTINATION);
    this.slots = new SendSlots(config.FORWARD_CONCURRENCY);
  }

  /** After the job worker drained (beforeApplicationShutdown): no request is in flight any more. */
  onApplicationShutdown(): void {
    this.agents.destroy();
  }

  /** A row in flight stays leased a little longer than the request may take. */
  get sendingLeaseMs(): number {
    return this.config.FORWARD_TIMEOUT_MS * 2 + Math.min(5_000, this.config.FORWARD_TIMEOUT_MS);
  }

  /**
   * Claims due rows straight from the outbox, as many as there are free send slots (waiting for
   * one when none is free), and starts their attempts; returns how many rows it asked for and
   * how many it got (fewer: nothing more is due now). A claimed row is sent at once, so its
   * `sending` lease never runs while it waits. An attempt that throws (the database gone
   * mid-way) leaves its row leased: it is claimed again when the lease runs out
   * (docs/restservices.md, "Connections and batches").
   */
  async sendDue(max: number, stopping: AbortSignal, options: { backlog?: boolean } = {}): Promise<{ asked: number; claimed: number }> {
    // With a backlog (the last claim filled every free slot) a claim waits for a quarter of the
    // slots rather than taking them one by one: one statement per few rows, not per row.
    const n = await this.slots.take(max, options.backlog ? Math.ceil(this.slots.size / 4) : 1);
    // Draining (also when it began while this waited for a slot): nothing new starts.
    if (stopping.aborted) {
      this.slots.give(n);
      return { asked: 0, claimed: 0 };
    }
    let rows: ClaimedDelivery[];
    try {
      rows = await this.repo.claimDue(n, this.sendingLeaseMs, this.config.FORWARD_MAX_ATTEMPTS);
    } catch (err) {
      this.slots.give(n);
      throw err;
    }
    this.slots.give(n - rows.length);
    let prepared: PreparedRow[];
    try {
      prepared = await this.prepare(rows);
    } catch (err) {
      this.slots.give(rows.length); // the rows stay leased
      throw err;
    }
    // The claim's answers come back close together: their attempt ends go in one write.
    this.attemptLog.expect(prepared.map((p) => p.row.id));
    for (const send of prepared) {
      const attempt: Promise<void> = this.deliverRow(send)
        .catch((err: unknown) => this.recordThrown(send, err))
        .catch((err: unknown) => this.logger.warn({ deliveryId: send.row.deliveryId, err: (err as Error).message }, 'delivery attempt failed; the row is retried when its lease ends'))
        .finally(() => {
          // Released, finished or failed without an attempt entry: the claim's others need not wait for it.
          this.attemptLog.ended(send.row.id);
          this.inFlight.delete(attempt);
          this.slots.give();
        });
      this.inFlight.add(attempt);
    }
    return { asked: n, claimed: rows.length };
  }

  /** Waits for every attempt in flight (SIGTERM drain: the requests started get their answers). */
  async drain(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /**
   * Each claimed row with its service and, for a row that goes out over HTTP, its slot in the
   * destination's schedule (rate limit, Retry-After): one gate round trip per service of the
   * batch instead of one per row.
   */
  private async prepare(rows: ClaimedDelivery[]): Promise<PreparedRow[]> {
    const prepared: PreparedRow[] = [];
    // One after the other: the first row of a service not in the cache reads it for the rest.
    for (const row of rows) prepared.push({ row, service: await this.serviceOf(row), slot: null });
    const byService = new Map<number, PreparedRow[]>();
    for (const p of prepared) {
      if (!p.service?.active || p.row.exhausted || p.service.name === 'spreadsheet' || !FORWARDERS[p.service.name]) continue;
      const list = byService.get(p.service.id);
      if (list) list.push(p);
      else byService.set(p.service.id, [p]);
    }
    for (const list of byService.values()) {
      const slots = await this.gate.reserveMany(list[0].service!, list.length);
      list.forEach((p, i) => (p.slot = slots[i]));
    }
    return prepared;
  }

  /**
   * A send that threw (a bug, a header Node refuses, a lost database connection) is a failed
   * attempt like a transport error: logged and retried while attempts remain, so it never goes
   * round unrecorded (docs/restservices.md, "Delivery model"). Throws when even that cannot be
   * written; the row's lease then ends and the next claim closes or retries it.
   */
  private async recordThrown({ row, service }: PreparedRow, err: unknown): Promise<void> {
    if (!service) throw err;
    const message = err instanceof Error ? err.message : String(err);
    this.logger.warn({ deliveryId: row.deliveryId, err: message }, 'delivery attempt threw; recorded as a failed attempt');
    return this.classify(row, service, { statusCode: null, latencyMs: 0, error: `send failed: ${message}`.slice(0, 1_000), responseExcerpt: null, retryAfterMs: null });
  }

  private async deliverRow({ row, service, slot }: PreparedRow): Promise<void> {
    if (!service) return void (await this.repo.finish(row.id, 'skipped'));
    // Its attempts were spent by claims whose sends left no record (the claim, CLAIM_SQL): closed, not sent again.
    if (row.exhausted) return this.record(row, service, 'failed', { statusCode: null, latencyMs: 0, error: 'attempt limit reached: earlier attempts ended without an answer', responseExcerpt: null, retryAfterMs: null });
    // Switched off (by a user, a 410 or auto-disable): the row waits for `active: true` (docs/restservices.md).
    if (!service.active) return this.repo.release(row.id, 'held');
    const forwarder = FORWARDERS[service.name];
    if (service.name !== 'spreadsheet' && !forwarder) return this.record(row, service, 'skipped', { statusCode: null, latencyMs: 0, error: 'no forwarder for this service', responseExcerpt: null, retryAfterMs: null });
    if (service.name === 'spreadsheet') return this.deliverToSheet(row, service);

    // The destination's rate limit and any Retry-After it gave (the slot taken by `prepare`): a
    // slot further out sends the row back to the outbox (not an attempt); a near one is waited
    // for right before the request.
    const reserved = slot!;
    if (!reserved.send) return this.repo.release(row.id, reserved.retryAt);

    const secrets = this.credentials.secrets(service);
    let built: OutgoingRequest;
    // An entity event sends its snapshot as the entity object (docs/entities.md, "Entity events to rest services").
    if (isEntityEvent(row.event)) built = entityRequest(service, row.snapshot as unknown as EntitySnapshot, this.config.PUBLIC_BASE_URL);
    else {
      let loaded = await this.payloadOf(row, XML_SERVICES.includes(service.name));
      if (!loaded) return this.record(row, service, 'skipped', { statusCode: null, latencyMs: 0, error: 'submission deleted before delivery', responseExcerpt: null, retryAfterMs: null });
      // An encrypted submission goes as the service's encrypted_submissions says (docs/encryption.md "Forwarding").
      const sealed = await this.envelopes.verdict(service, loaded.submission, loaded.json, row.event);
      if (sealed.action === 'skip') return this.record(row, service, 'skipped', { statusCode: null, latencyMs: 0, error: sealed.reason, responseExcerpt: null, retryAfterMs: null });
      if (sealed.action === 'wait') return this.repo.release(row.id, sealed.retryAt);
      if (sealed.action === 'envelope') loaded = { ...loaded, json: sealed.json };
      if (sealed.action === 'decrypted') loaded = (await this.submissions.loadSubmissionJson(row.submissionId)) ?? loaded;
      // Extra headers and Basic credentials go on at send time only (service-credentials.ts).
      built = forwarder!.build({ service, authToken: secrets.authToken, submission: loaded.submission, form: loaded.form, json: loaded.json, event: row.event });
    }
    // Every attempt of a delivery sends the bytes of the first (docs/restservices.md, "Fidelity").
    if (row.body && built.body) built.body = row.body;
    const request = withServiceAuth(built, secrets);
    const headers = deliveryHeaders(request, { deliveryId: row.deliveryId, attempt: row.attempts, event: row.event, signingSecret: secrets.signingSecret });
    const gate = await this.gate.wait(service, reserved);
    if (!gate.send) return this.repo.release(row.id, gate.retryAt);
    const result = await sendOnce(request, headers, this.guard, this.config.FORWARD_TIMEOUT_MS, this.agents);
    deliveryMetrics.latency.observe({ service: service.name }, result.latencyMs / 1000);
    await this.gate.settle(service, result);
    if (!row.body && request.body && !succeeded(result)) await this.repo.keepBody(row.id, request.body);
    if (service.name === 'dataset_service') await this.storeDatasetId(service, result);
    return this.classify(row, service, result);
  }

  /**
   * The service as last read, while its `date_modified` (returned by the claim) is unchanged:
   * every change through the API or a deactivation moves it, so a send never uses stale
   * settings, and a busy service is read once instead of per delivery.
   */
  private async serviceOf(row: ClaimedDelivery): Promise<RestServiceEntity | null> {
    if (row.serviceVersion === null) return null;
    const hit = this.serviceCache.get(row.serviceId);
    if (hit && hit.version === row.serviceVersion) return hit.service;
    const service = await this.repo.findService(row.serviceId);
    this.serviceCache.delete(row.serviceId);
    if (service) {
      if (this.serviceCache.size >= 10_000) this.serviceCache.delete(this.serviceCache.keys().next().value!);
      this.serviceCache.set(row.serviceId, { version: row.serviceVersion, service });
    }
    return service;
  }

  /**
   * The form, read at most every few seconds per form: only its id_string, uuid and field list
   * shape the payload, and a deleted form is caught by the claim statement (`submissionGone`).
   */
  private async formOf(id: number): Promise<FormEntity | null> {
    const key = String(id);
    const hit = this.formCache.get(key);
    if (hit) return hit;
    const form = await this.forms.findLive(id);
    if (form) this.formCache.set(key, form);
    return form;
  }

  /**
   * What the delivery is about: the snapshot taken when the event was recorded, with the form as
   * it is now; null when it must not be sent (spec §6.2: a created or updated event whose
   * submission was deleted meanwhile, soft or hard, or whose form is gone). Rows written before
   * snapshots existed reload the live submission, and so does a row for a service that sends the
   * instance XML whose snapshot was stored without it (the service was another kind then;
   * delivery-snapshot.ts, snapshotForServiceSql).
   */
  private async payloadOf(row: ClaimedDelivery, needsXml = false): Promise<{ json: SubmissionJson; submission: SubmissionEntity; form: FormEntity } | null> {
    if (row.event !== 'deleted' && row.submissionGone) return null;
    if (!row.snapshot || (needsXml && row.event !== 'deleted' && typeof row.snapshot.submission.xml !== 'string')) {
      return row.event === 'deleted' ? null : this.submissions.loadSubmissionJson(row.submissionId);
    }
    const form = await this.formOf(row.snapshot.submission.form_id as number);
    if (!form) return null;
    if (row.event === 'created' && row.snapshot.missing_media?.length) {
      this.logger.warn({ deliveryId: row.deliveryId, submissionId: row.submissionId, missing: row.snapshot.missing_media, waitedSeconds: this.config.FORWARD_MEDIA_WAIT_SECONDS }, 'forwarding a submission whose attachments have not all arrived (FORWARD_MEDIA_WAIT_SECONDS passed)');
    }
    // The snapshot was parsed for this attempt alone: its answers become the payload object (no
    // copy), except for the one forwarder that reads the answers apart (generic_xml with `fields`).
    return { ...snapshotJson(row.snapshot, row.event, form, this.config.PUBLIC_BASE_URL, { reuseAnswers: !needsXml }), form };
  }

  /** 2xx success; 410 deactivates; 408/425/429/5xx/transport errors retry while attempts remain; else failed. */
  private async classify(row: ClaimedDelivery, service: RestServiceEntity, result: SendResult): Promise<void> {
    if (succeeded(result)) return this.record(row, service, 'success', result);
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

  private async deliverToSheet(row: ClaimedDelivery, service: RestServiceEntity): Promise<void> {
    const loaded = row.event === 'deleted' ? null : await this.payloadOf(row);
    // A replay's `created` row (the back-fill) takes the rows after it into one append.
    if (row.replayId !== null && row.event === 'created' && loaded && !(await this.sheets.hasRow(service.id, row.submissionId))) return this.appendReplayRows(row, service, loaded.json);
    const gate = await this.gate.admit(service);
    if (!gate.send) return this.repo.release(row.id, gate.retryAt);
    const result = await this.sheets.deliver(row, service, loaded);
    if (result !== 'skip') await this.gate.settle(service, result);
    if (result === 'skip') return this.record(row, service, 'skipped', { statusCode: null, latencyMs: 0, error: loaded || row.event === 'deleted' ? 'no sheet row for this submission' : 'submission deleted before delivery', responseExcerpt: null, retryAfterMs: null });
    return this.classify(row, service, result);
  }

  /**
   * A spreadsheet replay's head row and up to SHEET_APPEND_BATCH - 1 rows after it in one
   * append: one write of the sheet provider's per-minute quota (and one slot of the service's
   * limit) for up to 100 submissions, in `_id` order (docs/restservices.md, "Spreadsheet
   * back-fill"). Every row is still its own delivery: its attempt is logged and classified with
   * the append's result, so retries, the replay's progress and cancel work as for any replay.
   */
  private async appendReplayRows(head: ClaimedDelivery, service: RestServiceEntity, json: SubmissionJson): Promise<void> {
    const batch = [{ row: head, json }];
    for (const row of await this.repo.claimReplayFollowers(head, SHEET_APPEND_BATCH - 1, this.sendingLeaseMs)) {
      const loaded = await this.payloadOf(row);
      if (loaded) batch.push({ row, json: loaded.json });
      else await this.record(row, service, 'skipped', { statusCode: null, latencyMs: 0, error: 'submission deleted before delivery', responseExcerpt: null, retryAfterMs: null });
    }
    const gate = await this.gate.admit(service);
    if (!gate.send) {
      for (const b of batch) await this.repo.release(b.row.id, gate.retryAt);
      return;
    }
    const result = await this.sheets.appendRows(service, batch.map((b) => ({ submissionId: b.row.submissionId, json: b.json })));
    await this.gate.settle(service, result);
    await Promise.all(batch.map((b) => this.classify(b.row, service, result)));
    // The replay's next head waited for these rows.
    await this.outbox.wake();
  }

  /**
   * `_bamboo_dataset_id` (docs/restservices.md): the service's configured `dataset_id`, or the
   * `id` the dataset service answered, kept on the form: every later payload and data row of the
   * form carries it. This worker's copy of the form is read again for the next payload.
   */
  private async storeDatasetId(service: RestServiceEntity, result: SendResult): Promise<void> {
    if (!succeeded(result)) return;
    const id = service.options.dataset_id || datasetIdOf(result.responseExcerpt);
    if (!id) return;
    await this.forms.setBambooDatasetId(service.formId, id);
    this.formCache.delete(String(service.formId));
  }

  private async record(row: ClaimedDelivery, service: RestServiceEntity, status: AttemptStatus, r: SendResult, retryAt?: Date): Promise<void> {
    await this.attemptLog.record({
      deliveryRowId: row.id, serviceId: service.id, attempt: row.attempts, status, statusCode: r.statusCode, latencyMs: r.latencyMs, error: r.error,
      responseExcerpt: r.responseExcerpt, event: row.event, retryAt: retryAt ?? null,
    });
    deliveryMetrics.attempts.inc({ service_id: String(service.id), service: service.name, outcome: status });
    if (status === 'failed') this.logger.warn({ serviceId: service.id, deliveryId: row.deliveryId, statusCode: r.statusCode, error: r.error }, 'delivery failed');
    // The next event of this submission for this service waited for this one (docs/restservices.md, "Ordering").
    if (status !== 'retrying' && row.hasSuccessor) await this.outbox.wake();
  }
}

/** A claimed row, its service (null: deleted) and its slot of the destination's schedule (null: not sent over HTTP). */
interface PreparedRow {
  row: ClaimedDelivery;
  service: RestServiceEntity | null;
  slot: GateDecision | null;
}

function succeeded(result: SendResult): boolean {
  return result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
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
