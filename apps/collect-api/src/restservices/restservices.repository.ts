import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { sqlStateOf } from '@collect/platform';
import pg from 'pg';
import { In, type Repository } from 'typeorm';
import { preparedQuery, preparedQueryOnPool } from '../database/prepared-query.js';
import { ATTEMPT_WRITE_SQL, CANDIDATES, CLAIM_PLANNER, CLAIM_SQL, CLAIMABLE, CLAIMED, FINISHED, LEASE, OPEN } from './delivery/delivery-statements.js';
import { DeliveryAttemptEntity, DeliveryEntity, RestServiceEntity, type AttemptStatus, type DeliveryEvent, type DeliverySnapshot, type ServiceName } from './restservice.entities.js';

/** One finished attempt: its log entry and the row's next state (`retryAt` for `retrying`). */
export type AttemptRecord = Omit<DeliveryAttemptEntity, 'id' | 'createdAt'> & { retryAt: Date | null };

/** A row claimed for one attempt, with what the claim found out about its submission. */
export type ClaimedDelivery = DeliveryEntity & { submissionGone: boolean; hasSuccessor: boolean; serviceVersion: string | null; exhausted?: boolean };

/** Delivery health of a service over the last 24 hours (docs/restservices.md, "Health"). */
export interface ServiceHealth {
  successRate: number;
  p95LatencyMs: number | null;
}

/** Rows of services switched off meanwhile wait here until `active: true` resumes them. */
const HELD_UNTIL = `'9999-12-31'::timestamptz`;

/** Queries on rest_services, the rest_deliveries outbox and the attempt log. */
@Injectable()
export class RestServicesRepository implements OnApplicationShutdown {
  private readonly logger = new Logger(RestServicesRepository.name);
  /** The worker's claim connection (CLAIM_PLANNER), opened by the first claim. */
  private claimPool: pg.Pool | null = null;

  constructor(
    @InjectRepository(RestServiceEntity) private readonly services: Repository<RestServiceEntity>,
    @InjectRepository(DeliveryEntity) private readonly deliveries: Repository<DeliveryEntity>,
    @InjectRepository(DeliveryAttemptEntity) private readonly attempts: Repository<DeliveryAttemptEntity>,
  ) {}

  findService(id: number): Promise<RestServiceEntity | null> {
    if (!Number.isSafeInteger(id) || id <= 0 || id > 2_147_483_647) return Promise.resolve(null);
    return this.services.findOneBy({ id });
  }

  listServices(formIds: number[]): Promise<RestServiceEntity[]> {
    if (!formIds.length) return Promise.resolve([]);
    return this.services.find({ where: { formId: In(formIds) }, order: { id: 'ASC' } });
  }

  findDuplicate(formId: number, name: string, serviceUrl: string): Promise<RestServiceEntity | null> {
    return this.services.findOneBy({ formId, name: name as ServiceName, serviceUrl });
  }

  /** Insert or update; false when the (form, name, service_url) unique constraint refused it. */
  async saveService(row: Partial<RestServiceEntity>): Promise<RestServiceEntity | null> {
    try {
      return await this.services.save(this.services.create(row));
    } catch (err) {
      if (sqlStateOf(err) === '23505') return null;
      throw err;
    }
  }

  async deleteService(id: number): Promise<void> {
    await this.services.delete({ id });
  }

  /**
   * Claims due rows for sending, one attempt each, in one statement (docs/restservices.md,
   * "Connections and batches"): due pending/retrying rows not leased, or whose lease ran
   * out (a worker killed mid-send; LEASE, CLAIMABLE), earliest due first, but never a row while an earlier one of the same
   * submission for the same service is still open: the events of one submission reach a
   * service in order, also across retries ("Ordering"). A replay of a spreadsheet service goes
   * one head row at a time, in `_id` order: the head's attempt takes the rows after it into the
   * same append (claimReplayFollowers; "Spreadsheet back-fill"). SKIP LOCKED lets several
   * workers claim at once. The checks run on the earliest due rows only (`limit` +
   * CANDIDATES of them, a top-N of one index range in a subquery the checks cannot be pushed
   * into): run on every due row, as the planner chose to with the statistics of a fast-growing
   * table, they cost a claim time in proportion to the backlog (20–300 ms per claim in the
   * bench; docs/restservices.md, "Connections and batches (the worker's hot path)"). The subquery keeps its
   * index order, so the outer ORDER BY needs no sort and the checks run lazily, row by row,
   * until `limit` rows passed: about `limit` probes per claim, not `limit` + CANDIDATES
   * (docs/restservices.md, "Connections and batches (the worker's hot path)"). The earlier-row check is a scalar subquery (LIMIT 1)
   * probed per candidate through rest_deliveries_open_order_idx. What the claim found out comes
   * along (CLAIMED), so the worker may reuse the service it read last.
   */
  async claimDue(limit: number, leaseMs: number, maxAttempts: number): Promise<ClaimedDelivery[]> {
    const rows = await preparedQueryOnPool<Record<string, unknown>>(
      this.claims(),
      CLAIM_SQL,
      [limit, String(leaseMs), maxAttempts],
    );
    return rows.map((raw) => this.claimed(raw)).sort((a, b) => a.id - b.id);
  }

  /** A pool of one connection with the claim's planner settings; claims come one at a time (the relay's pass). */
  private claims(): pg.Pool {
    if (this.claimPool) return this.claimPool;
    const { url } = this.deliveries.manager.connection.options as { url?: string };
    this.claimPool = new pg.Pool({ connectionString: url, max: 1, options: CLAIM_PLANNER });
    // An idle connection that breaks (a database restart) is replaced by the next claim.
    this.claimPool.on('error', (err) => this.logger.warn({ err: err.message }, 'claim connection lost; the next claim opens another'));
    return this.claimPool;
  }

  /** After the relay stopped claiming and drained (beforeApplicationShutdown). */
  async onApplicationShutdown(): Promise<void> {
    await this.claimPool?.end();
    this.claimPool = null;
  }

  /**
   * The rows of a replay after `head` that go into the head's append (docs/restservices.md,
   * "Spreadsheet back-fill"): up to `limit` open `created` rows in id order whose submission
   * has no sheet row yet, up to the first one an earlier event of its own submission still
   * holds back (so the sheet gets them in `_id` order). Not-yet-due retries ride along: the
   * head's schedule is theirs. Each is claimed for one attempt, as claimDue claims.
   */
  async claimReplayFollowers(head: ClaimedDelivery, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    if (head.replayId === null || limit <= 0) return [];
    const result = (await this.deliveries.query(
      `WITH cand AS (
         SELECT d.id, EXISTS (SELECT 1 FROM rest_deliveries e WHERE e.submission_id = d.submission_id AND e.service_id = d.service_id AND e.id < d.id AND e.status IN ${OPEN}) AS blocked
         FROM rest_deliveries d
         WHERE d.replay_id = $1 AND d.service_id = $2 AND d.id > $3 AND d.status IN ('pending', 'retrying') AND d.lease_until IS NULL AND d.event = 'created'
           AND NOT EXISTS (SELECT 1 FROM sheets_rows sr WHERE sr.service_id = d.service_id AND sr.submission_id = d.submission_id)
         ORDER BY d.id LIMIT $4 FOR UPDATE OF d SKIP LOCKED),
       taken AS (SELECT id FROM cand WHERE id < COALESCE((SELECT min(id) FROM cand WHERE blocked), 9223372036854775807))
       UPDATE rest_deliveries d SET attempts = attempts + 1, ${LEASE('$5')}
       FROM taken WHERE d.id = taken.id AND d.status IN ('pending', 'retrying') AND d.lease_until IS NULL
       RETURNING ${CLAIMED}`,
      [head.replayId, head.serviceId, head.id, limit, String(leaseMs)],
    )) as [Array<Record<string, unknown>>, number];
    return result[0].map((raw) => this.claimed(raw)).sort((a, b) => a.id - b.id);
  }

  private claimed(raw: Record<string, unknown>): ClaimedDelivery {
    return Object.assign(this.deliveries.create({
      id: Number(raw.id), deliveryId: raw.delivery_id as string, serviceId: raw.service_id as number, submissionId: raw.submission_id as number, entityId: raw.entity_id === null || raw.entity_id === undefined ? null : Number(raw.entity_id),
      event: raw.event as DeliveryEvent, status: 'sending', attempts: raw.attempts as number, attemptBase: raw.attempt_base as number,
      snapshot: (raw.snapshot as DeliverySnapshot | null) ?? null, body: (raw.body as Buffer | null) ?? null, replayId: (raw.replay_id as number | null) ?? null,
    }), { submissionGone: raw.submission_gone as boolean, hasSuccessor: raw.has_successor as boolean, serviceVersion: (raw.service_version as string | null) ?? null, exhausted: raw.exhausted === true });
  }

  /** The request body of an attempt that will be retried: later attempts send these bytes. */
  async keepBody(id: number, body: Buffer): Promise<void> {
    await this.deliveries.query(`UPDATE rest_deliveries SET body = $2 WHERE id = $1 AND body IS NULL`, [id, body]);
  }

  /**
   * Deletes up to `limit` finished deliveries last changed more than `days` days ago, oldest
   * first (their attempts go by cascade); returns how many went.
   */
  async pruneFinished(days: number, limit: number): Promise<number> {
    const [, deleted] = (await this.deliveries.query(
      `DELETE FROM rest_deliveries WHERE id IN (
         SELECT id FROM rest_deliveries
         WHERE status IN ${FINISHED} AND date_modified < now() - make_interval(days => $1)
         ORDER BY date_modified LIMIT $2)`,
      [days, limit],
    )) as [unknown, number];
    return deleted;
  }

  async finish(id: number, status: 'success' | 'failed' | 'skipped'): Promise<void> {
    await this.deliveries.update({ id }, { status, leaseUntil: null });
  }

  /**
   * The end of many attempts in one statement (the hot path of the worker, batched by
   * DeliveryAttemptLog): their log entries, each row's next state and, per service, the delivery
   * health of its last non-skipped attempt (`failure_count`: failed attempts since the batch's
   * last success, or added to the stored count when the batch has none).
   */
  async recordAttempts(list: AttemptRecord[]): Promise<void> {
    if (!list.length) return;
    const col = <K extends keyof AttemptRecord>(k: K) => list.map((a) => a[k]);
    await preparedQuery<Record<string, unknown>>(
      this.deliveries.manager.connection,
      ATTEMPT_WRITE_SQL,
      [col('deliveryRowId'), col('serviceId'), col('attempt'), col('status'), col('statusCode'), col('latencyMs'), col('error'), col('responseExcerpt'), col('event'), col('retryAt')],
    );
  }

  async deactivate(serviceId: number, reason: string): Promise<void> {
    await this.services.query(`UPDATE rest_services SET active = false, inactive_reason = $2, date_modified = now() WHERE id = $1`, [serviceId, reason]);
  }

  listAttempts(serviceId: number, status: AttemptStatus | null, offset: number, limit: number): Promise<[Array<DeliveryAttemptEntity & { deliveryUuid: string }>, number]> {
    const qb = this.attempts
      .createQueryBuilder('a')
      .innerJoin(DeliveryEntity, 'd', 'd.id = a.delivery_row_id')
      .addSelect('d.delivery_id', 'delivery_uuid')
      .where('a.service_id = :serviceId', { serviceId });
    if (status) qb.andWhere('a.status = :status', { status });
    qb.orderBy('a.id', 'DESC').offset(offset).limit(limit);
    return Promise.all([
      qb.getRawAndEntities().then(({ raw, entities }) => entities.map((e, i) => Object.assign(e, { deliveryUuid: (raw[i] as { delivery_uuid: string }).delivery_uuid }))),
      qb.getCount(),
    ]);
  }

  /** The delivery of a log entry (by attempt id or by X-Delivery-Id), within one service. */
  async findDeliveryForRetry(serviceId: number, ref: string): Promise<DeliveryEntity | null> {
    if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(ref)) return this.deliveries.findOneBy({ serviceId, deliveryId: ref.toLowerCase() });
    if (!/^\d{1,15}$/.test(ref)) return null;
    const attempt = await this.attempts.findOneBy({ id: Number(ref), serviceId });
    return attempt ? this.deliveries.findOneBy({ id: attempt.deliveryRowId, serviceId }) : null;
  }

  /** Back to pending with a fresh attempt budget. */
  async requeue(ids: number[]): Promise<void> {
    if (!ids.length) return;
    await this.deliveries.query(
      `UPDATE rest_deliveries SET status = 'pending', attempt_base = attempts, next_attempt_at = now(), lease_until = NULL, date_modified = now() WHERE id = ANY($1)`,
      [ids],
    );
  }

  async requeueFailed(serviceId: number): Promise<number> {
    const rows = (await this.deliveries.query(
      `UPDATE rest_deliveries SET status = 'pending', attempt_base = attempts, next_attempt_at = now(), lease_until = NULL, date_modified = now()
       WHERE service_id = $1 AND status = 'failed' RETURNING id`,
      [serviceId],
    )) as [unknown[], number];
    return rows[0].length;
  }

  /**
   * Success share and p95 latency of the attempts of the last 24 h per service (skipped ones
   * are not requests to the destination); one index range scan per service.
   */
  async health24h(serviceIds: number[]): Promise<Map<number, ServiceHealth>> {
    if (!serviceIds.length) return new Map();
    const rows = (await this.attempts.query(
      `SELECT service_id, count(*) FILTER (WHERE status = 'success')::float8 / count(*) AS rate,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY latency_ms) AS p95
       FROM rest_delivery_attempts
       WHERE service_id = ANY($1) AND created_at > now() - interval '24 hours' AND status <> 'skipped'
       GROUP BY service_id`,
      [serviceIds],
    )) as Array<{ service_id: number; rate: number; p95: number | null }>;
    return new Map(rows.map((r) => [r.service_id, { successRate: Math.round(r.rate * 10_000) / 10_000, p95LatencyMs: r.p95 === null ? null : Math.round(r.p95) }]));
  }

  /** The newest live submission of a form (test-fire), or null. */
  async latestSubmissionId(formId: number): Promise<number | null> {
    const rows = (await this.services.query(`SELECT id FROM submissions WHERE form_id = $1 AND deleted_at IS NULL ORDER BY id DESC LIMIT 1`, [formId])) as Array<{ id: number }>;
    return rows[0]?.id ?? null;
  }

  /**
   * Parks a claimed row of a switched-off service (not counted as an attempt) until the service
   * is re-enabled; `release` with a time does the same for a row the destination limit defers.
   */
  async release(id: number, at: Date | 'held'): Promise<void> {
    const [, moved] = (await this.deliveries.query(
      `UPDATE rest_deliveries d SET status = CASE WHEN attempts - 1 > attempt_base THEN 'retrying' ELSE 'pending' END, attempts = attempts - 1,
         next_attempt_at = ${at === 'held' ? HELD_UNTIL : '$2::timestamptz'}, lease_until = NULL, date_modified = now()
       WHERE d.id = $1 AND d.lease_until IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM rest_replays r WHERE r.id = d.replay_id AND r.status = 'cancelled')`,
      at === 'held' ? [id] : [id, at],
    )) as [unknown, number];
    // A row of a replay cancelled meanwhile is dropped instead (replays.repository.ts, cancel).
    if (!moved) await this.deliveries.query(`DELETE FROM rest_deliveries WHERE id = $1 AND lease_until IS NOT NULL AND replay_id IS NOT NULL`, [id]);
  }

  /**
   * Re-enable: every open row of the service is due now, with a fresh attempt budget, and so is
   * every row that ran out of attempts during the outage (failed since the service's last
   * success, on a transport error, 408, 425, 429 or 5xx; a refusal such as a 400 stays failed).
   */
  async resumeHeld(serviceId: number): Promise<number> {
    const rows = (await this.deliveries.query(
      `UPDATE rest_deliveries d SET status = 'pending', next_attempt_at = now(), attempt_base = attempts, lease_until = NULL, date_modified = now()
       WHERE d.service_id = $1 AND ((d.status IN ('pending', 'retrying') AND d.lease_until IS NULL) OR (d.status = 'failed'
         AND d.date_modified > COALESCE((SELECT max(b.created_at) FROM rest_delivery_attempts b WHERE b.service_id = $1 AND b.status = 'success'), '-infinity')
         AND EXISTS (SELECT 1 FROM (SELECT a.status_code, a.error FROM rest_delivery_attempts a WHERE a.delivery_row_id = d.id ORDER BY a.id DESC LIMIT 1) last
                     WHERE (last.status_code IS NULL AND COALESCE(last.error, '') NOT LIKE 'refused:%') OR last.status_code IN (408, 425, 429) OR last.status_code >= 500)))
       RETURNING d.id`,
      [serviceId],
    )) as [unknown[], number];
    return rows[0].length;
  }

  /**
   * Switches off every active service whose attempts since its last success (and since it was
   * last switched on) are all failures, the first of them at least `windowMs` ago. Each
   * service's attempts are read through the (service_id, created_at) index, newest first.
   */
  async disableFailing(windowMs: number, reason: string): Promise<Array<{ id: number; name: string; failingSince: Date }>> {
    const rows = (await this.services.query(
      `WITH failing AS (
         SELECT s.id, f.since
         FROM rest_services s
         CROSS JOIN LATERAL (
           SELECT min(a.created_at) AS since
           FROM rest_delivery_attempts a
           WHERE a.service_id = s.id AND a.status IN ('failed', 'retrying') AND a.created_at >= s.active_since
             AND a.created_at > COALESCE((SELECT max(b.created_at) FROM rest_delivery_attempts b WHERE b.service_id = s.id AND b.status = 'success'), '-infinity')
         ) f
         WHERE s.active AND f.since <= now() - ($1 || ' milliseconds')::interval)
       UPDATE rest_services s
       SET active = false, inactive_reason = $2 || ' (since ' || to_char(failing.since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || '); PATCH "active": true resumes its pending deliveries.', date_modified = now()
       FROM failing WHERE s.id = failing.id AND s.active
       RETURNING s.id, s.name, failing.since`,
      [String(windowMs), reason],
    )) as [Array<{ id: number; name: string; since: Date }>, number];
    return rows[0].map((r) => ({ id: r.id, name: r.name, failingSince: r.since }));
  }
}
