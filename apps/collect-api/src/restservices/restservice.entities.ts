import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { EncryptedSubmissionsPolicy } from '../encrypted-submissions/envelope-forwarding.js';

export const SERVICE_NAMES = ['health_forwarder', 'generic_json', 'generic_xml', 'dataset_service', 'messaging', 'spreadsheet'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];

/** Service-specific, non-secret settings (messaging flow, spreadsheet options, dataset id). */
export interface ServiceOptions {
  flow_title?: string;
  flow_uuid?: string;
  contacts?: string;
  spreadsheet_title?: string;
  send_existing_data?: boolean;
  sync_updates?: boolean;
  redirect_uri?: string;
  dataset_id?: string;
}

const bigintAsNumber = { to: (v: number) => v, from: (v: string | null) => (v === null ? null : Number(v)) };

@Entity({ name: 'rest_services' })
export class RestServiceEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'form_id', type: 'int' })
  formId: number;

  @Column({ type: 'varchar', length: 32 })
  name: ServiceName;

  @Column({ name: 'service_url', type: 'varchar', length: 2000 })
  serviceUrl: string;

  @Column({ type: 'jsonb', default: {} })
  options: ServiceOptions;

  /** messaging `auth_token`, SecretBox-encrypted (COLLECT_SECRET_KEY). */
  @Column({ name: 'auth_token_enc', type: 'text', nullable: true })
  authTokenEnc: string | null;

  /** Standard Webhooks secret (`whsec_...`), SecretBox-encrypted; write-only on the API. */
  @Column({ name: 'signing_secret_enc', type: 'text', nullable: true })
  signingSecretEnc: string | null;

  /** Xpaths of the form fields generic_json/generic_xml payloads are cut down to; null = all. */
  @Column({ type: 'jsonb', nullable: true })
  fields: string[] | null;

  /** Extra request headers (JSON object), SecretBox-encrypted; write-only on the API. */
  @Column({ name: 'headers_enc', type: 'text', nullable: true })
  headersEnc: string | null;

  /** The names of those headers, in clear, so responses can list them (`header_names`). */
  @Column({ name: 'header_names', type: 'jsonb', default: [] })
  headerNames: string[];

  /** Basic credentials (JSON `{"username", "password"}`), SecretBox-encrypted; never returned. */
  @Column({ name: 'basic_auth_enc', type: 'text', nullable: true })
  basicAuthEnc: string | null;

  /** What it does with encrypted submissions; null = the default (docs/encryption.md "Forwarding"). */
  @Column({ name: 'encrypted_submissions', type: 'varchar', length: 16, nullable: true })
  encryptedSubmissions: EncryptedSubmissionsPolicy | null;

  /** Requests per minute to this destination; null = the kind's default (docs/restservices.md). */
  @Column({ name: 'rate_limit_per_minute', type: 'int', nullable: true })
  rateLimitPerMinute: number | null;

  /** The submission events this service takes (docs/restservices.md, "Events"). */
  @Column({ type: 'text', array: true, default: () => `'{created}'` })
  events: DeliveryEvent[];

  @Column({ type: 'boolean', default: true })
  active: boolean;

  /** When the service was (re-)activated: auto-disable counts failures from here on. */
  @Column({ name: 'active_since', type: 'timestamptz', default: () => 'now()' })
  activeSince: Date;

  @Column({ name: 'inactive_reason', type: 'text', nullable: true })
  inactiveReason: string | null;

  @Column({ name: 'last_delivery_at', type: 'timestamptz', nullable: true })
  lastDeliveryAt: Date | null;

  @Column({ name: 'last_status', type: 'varchar', length: 16, nullable: true })
  lastStatus: string | null;

  /** Deliveries that failed for good since the last success. */
  @Column({ name: 'failure_count', type: 'int', default: 0 })
  failureCount: number;

  @CreateDateColumn({ name: 'date_created', type: 'timestamptz' })
  dateCreated: Date;

  @UpdateDateColumn({ name: 'date_modified', type: 'timestamptz' })
  dateModified: Date;
}

/**
 * The submission as it was when its event was recorded, stored on each outbox row by the outbox
 * statement itself (PostgreSQL's `to_jsonb` of the rows, so the storing transaction builds
 * nothing in JavaScript). Every attempt of the delivery builds its request from this, never from
 * the live record: an edit made between two attempts is the next event, not a change of this one
 * (docs/restservices.md, "Fidelity"). The one-statement intake's `created` rows store none until
 * the submission first changes (a trigger then stores the old row's, migration 1764950000000);
 * till then the claim builds it from the live row, the same SQL
 * (restservices/delivery/delivery-statements.ts, CLAIMED). The SQL that builds it, and the submission JSON made
 * of it: delivery/delivery-snapshot.ts.
 */
export interface DeliverySnapshot {
  /** `to_jsonb(submissions.*)`: snake_case columns, timestamps as ISO text. */
  submission: Record<string, unknown>;
  /** `to_jsonb(attachments.*)` of the live attachments, by id. */
  attachments: Array<Record<string, unknown>>;
  submitted_by: string | null;
  /** Attachments the instance XML names that had not arrived when the row was last refreshed. */
  missing_media: string[];
}

/** The submission events a service may take (`events`); docs/restservices.md, "Events". */
export type DeliveryEvent = 'created' | 'updated' | 'deleted' | EntityDeliveryEvent;

/** Events of an entity (docs/entities.md, "Entity events to rest services"): generic_json services only. */
export type EntityDeliveryEvent = 'entity_created' | 'entity_updated' | 'entity_deleted';
/**
 * Row states: pending/retrying (due at next_attempt_at; leased by a worker while it sends, `leaseUntil`)
 * → final. `sending`: a row claimed by a worker older than migration 1764940000000.
 */
export type DeliveryRowStatus = 'pending' | 'retrying' | 'sending' | 'success' | 'failed' | 'skipped';

/** The outbox: one row per (submission or entity event, active service), written in the transaction of the change. */
@Entity({ name: 'rest_deliveries' })
export class DeliveryEntity {
  @Column({ primary: true, type: 'bigint', generated: 'increment', transformer: bigintAsNumber })
  id: number;

  /** The X-Delivery-Id / webhook-id: stable across attempts so receivers can de-duplicate. */
  @Column({ name: 'delivery_id', type: 'uuid' })
  deliveryId: string;

  @Column({ name: 'service_id', type: 'int' })
  serviceId: number;

  /** The submission of a submission event; null on a row about an entity (entityId). */
  @Column({ name: 'submission_id', type: 'int', nullable: true })
  submissionId: number;

  /** The entity of an entity event (docs/entities.md, "Entity events to rest services"); null otherwise. */
  @Column({ name: 'entity_id', type: 'bigint', nullable: true, transformer: bigintAsNumber })
  entityId: number | null;

  @Column({ type: 'varchar', length: 16 })
  event: DeliveryEvent;

  @Column({ type: 'varchar', length: 16, default: 'pending' })
  status: DeliveryRowStatus;

  @Column({ type: 'int', default: 0 })
  attempts: number;

  /** Attempts made before the last manual retry; the attempt limit counts from here. */
  @Column({ name: 'attempt_base', type: 'int', default: 0 })
  attemptBase: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz' })
  nextAttemptAt: Date;

  /** The submission when the event was recorded (delivery-snapshot.ts); null while the live submission is that (an unchanged new one, migration 1764950000000) and on rows from before snapshots. */
  @Column({ type: 'jsonb', nullable: true })
  snapshot: DeliverySnapshot | null;

  /** The request body of the first attempt, kept when a retry follows (same bytes every attempt). */
  @Column({ type: 'bytea', nullable: true })
  body: Buffer | null;

  /** The replay that wrote this row (replays.repository.ts); null for a submission's own event. */
  @Column({ name: 'replay_id', type: 'int', nullable: true })
  replayId: number | null;

  /** Set while a worker sends the row (its claim): when the row counts as abandoned (a worker killed mid-send) and is claimable again. */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  @CreateDateColumn({ name: 'date_created', type: 'timestamptz' })
  dateCreated: Date;

  @UpdateDateColumn({ name: 'date_modified', type: 'timestamptz' })
  dateModified: Date;
}

export type AttemptStatus = 'success' | 'failed' | 'retrying' | 'skipped';

/** The delivery log: one row per attempt (docs/api-conventions.md §Rest services). */
@Entity({ name: 'rest_delivery_attempts' })
export class DeliveryAttemptEntity {
  @Column({ primary: true, type: 'bigint', generated: 'increment', transformer: bigintAsNumber })
  id: number;

  @Column({ name: 'delivery_row_id', type: 'bigint', transformer: bigintAsNumber })
  deliveryRowId: number;

  @Column({ name: 'service_id', type: 'int' })
  serviceId: number;

  @Column({ type: 'int' })
  attempt: number;

  @Column({ type: 'varchar', length: 16 })
  status: AttemptStatus;

  @Column({ name: 'status_code', type: 'int', nullable: true })
  statusCode: number | null;

  @Column({ name: 'latency_ms', type: 'int', nullable: true })
  latencyMs: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ name: 'response_excerpt', type: 'text', nullable: true })
  responseExcerpt: string | null;

  @Column({ type: 'varchar', length: 16 })
  event: DeliveryEvent;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

export type ReplayStatus = 'queued' | 'running' | 'done' | 'cancelled';

/** What a replay sends (docs/api-conventions.md §Rest services, docs/restservices.md "Replay"). */
export interface ReplayFilters {
  submitted_after?: string;
  submitted_before?: string;
  submission_ids?: number[];
  only_failed?: boolean;
  /**
   * Set by the spreadsheet back-fill only (not an API filter): submissions the service's sheet
   * has no row for yet (docs/restservices.md, "Spreadsheet back-fill").
   */
  missing_in_sheet?: boolean;
}

/** A replay / back-fill of existing submissions to one service. */
@Entity({ name: 'rest_replays' })
export class ReplayEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'service_id', type: 'int' })
  serviceId: number;

  @Column({ type: 'varchar', length: 16, default: 'queued' })
  status: ReplayStatus;

  @Column({ type: 'jsonb', default: {} })
  filters: ReplayFilters;

  @Column({ type: 'int' })
  total: number;

  /** Frozen when the replay ends (the delivery log may be pruned later). */
  @Column({ type: 'int', default: 0 })
  done: number;

  @Column({ type: 'int', default: 0 })
  failed: number;

  /** The newest submission that existed when the replay was asked for. */
  @Column({ type: 'int' })
  upto: number;

  /** The last submission id given an outbox row so far. */
  @Column({ type: 'int', default: 0 })
  cursor: number;

  /** The newest entity of the service's form's lists when the replay was asked for (0: no entities). */
  @Column({ name: 'entity_upto', type: 'bigint', default: 0, transformer: { to: (v: number) => v, from: (v: string | number) => Number(v) } })
  entityUpto: number;

  /** The last entity id given an outbox row so far. */
  @Column({ name: 'entity_cursor', type: 'bigint', default: 0, transformer: { to: (v: number) => v, from: (v: string | number) => Number(v) } })
  entityCursor: number;

  /** Every outbox row of the replay is written. */
  @Column({ type: 'boolean', default: false })
  written: boolean;

  @Column({ name: 'created_by', type: 'int', nullable: true })
  createdBy: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
