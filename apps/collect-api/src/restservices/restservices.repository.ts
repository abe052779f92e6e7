import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type Repository } from 'typeorm';
import type { DeliverySnapshot } from './delivery-snapshot.js';
import { DeliveryAttemptEntity, DeliveryEntity, RestServiceEntity, type AttemptStatus, type DeliveryEvent, type ServiceName } from './restservice.entities.js';

/** A row claimed for one attempt, with what the claim found out about its submission. */
export type ClaimedDelivery = DeliveryEntity & { submissionGone: boolean; hasSuccessor: boolean };

/** Queries on rest_services, the rest_deliveries outbox and the attempt log. */
@Injectable()
export class RestServicesRepository {
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
      if ((err as { code?: string }).code === '23505' || (err as { driverError?: { code?: string } }).driverError?.code === '23505') return null;
      throw err;
    }
  }

  async deleteService(id: number): Promise<void> {
    await this.services.delete({ id });
  }

  /**
   * Claims rows for the queue: due pending/retrying rows, plus queued/sending rows whose lease
   * ran out (a Redis job lost with Redis, a worker killed mid-send), but never a row while an
   * earlier one of the same submission for the same service is still open: the events of one
   * submission reach a service in order, also across retries (docs/restservices.md,
   * "Ordering"). SKIP LOCKED lets several relays run at once.
   */
  async claimForQueue(limit: number, leaseMs: number): Promise<number[]> {
    const rows = (await this.deliveries.query(
      `UPDATE rest_deliveries SET status = 'queued', lease_until = now() + ($2 || ' milliseconds')::interval, date_modified = now()
       WHERE id IN (
         SELECT d.id FROM rest_deliveries d
         WHERE ((d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now())
             OR (d.status IN ('queued', 'sending') AND d.lease_until < now()))
           AND NOT EXISTS (SELECT 1 FROM rest_deliveries e WHERE e.submission_id = d.submission_id AND e.service_id = d.service_id AND e.id < d.id
                             AND e.status IN ('pending', 'retrying', 'queued', 'sending'))
         ORDER BY d.id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [limit, String(leaseMs)],
    )) as [Array<{ id: string }>, number] | Array<{ id: string }>;
    const list = Array.isArray(rows[0]) ? (rows[0] as Array<{ id: string }>) : (rows as Array<{ id: string }>);
    return list.map((r) => Number(r.id));
  }

  /**
   * Takes a queued row for sending (one attempt); null when it is finished or another worker has
   * it. Also says whether the submission is gone (soft or hard deleted) and whether a later event
   * of it waits for this service (to wake the relay when this one ends).
   */
  async claimForSending(id: number, leaseMs: number): Promise<ClaimedDelivery | null> {
    const result = (await this.deliveries.query(
      `UPDATE rest_deliveries d SET status = 'sending', attempts = attempts + 1, lease_until = now() + ($2 || ' milliseconds')::interval, date_modified = now()
       WHERE id = $1 AND (status = 'queued' OR (status = 'sending' AND lease_until < now()))
       RETURNING id, delivery_id, service_id, submission_id, event, attempts, attempt_base, snapshot, body,
         NOT EXISTS (SELECT 1 FROM submissions s WHERE s.id = d.submission_id AND s.deleted_at IS NULL) AS submission_gone,
         EXISTS (SELECT 1 FROM rest_deliveries n WHERE n.submission_id = d.submission_id AND n.service_id = d.service_id AND n.id > d.id
                   AND n.status IN ('pending', 'retrying', 'queued', 'sending')) AS has_successor`,
      [id, String(leaseMs)],
    )) as [Array<Record<string, unknown>>, number];
    const raw = result[0]?.[0];
    if (!raw) return null;
    return Object.assign(this.deliveries.create({
      id: Number(raw.id), deliveryId: raw.delivery_id as string, serviceId: raw.service_id as number, submissionId: raw.submission_id as number,
      event: raw.event as DeliveryEvent, status: 'sending', attempts: raw.attempts as number, attemptBase: raw.attempt_base as number,
      snapshot: (raw.snapshot as DeliverySnapshot | null) ?? null, body: (raw.body as Buffer | null) ?? null,
    }), { submissionGone: raw.submission_gone as boolean, hasSuccessor: raw.has_successor as boolean });
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
         WHERE status IN ('success', 'failed', 'skipped') AND date_modified < now() - make_interval(days => $1)
         ORDER BY date_modified LIMIT $2)`,
      [days, limit],
    )) as [unknown, number];
    return deleted;
  }

  async finish(id: number, status: 'success' | 'failed' | 'skipped'): Promise<void> {
    await this.deliveries.update({ id }, { status, leaseUntil: null });
  }

  /**
   * The end of one attempt in one statement (the hot path of the worker): the log entry, the
   * row's next state and, unless skipped, the service's delivery health.
   */
  async recordAttempt(a: Omit<DeliveryAttemptEntity, 'id' | 'createdAt'>, next: { status: AttemptStatus; retryAt: Date | null }): Promise<void> {
    await this.deliveries.query(
      `WITH logged AS (
         INSERT INTO rest_delivery_attempts (delivery_row_id, service_id, attempt, status, status_code, latency_ms, error, response_excerpt, event)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)),
       moved AS (
         UPDATE rest_deliveries SET status = $4::varchar, next_attempt_at = COALESCE($10::timestamptz, next_attempt_at), lease_until = NULL, date_modified = now()
         WHERE id = $1)
       UPDATE rest_services SET last_delivery_at = now(), last_status = $4::varchar,
         failure_count = CASE WHEN $4::varchar = 'success' THEN 0 WHEN $4::varchar = 'failed' THEN failure_count + 1 ELSE failure_count END
       WHERE id = $2 AND $4::varchar <> 'skipped'`,
      [a.deliveryRowId, a.serviceId, a.attempt, next.status, a.statusCode, a.latencyMs, a.error, a.responseExcerpt, a.event, next.retryAt],
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
}
