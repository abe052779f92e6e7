import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ENCRYPTED_SUBMISSIONS, type EncryptedSubmissionsPolicy } from '../encrypted-submissions/envelope-forwarding.js';
import { DELIVERY_EVENTS } from './delivery/delivery-events.js';
import { ATTEMPT_STATUSES } from './restservice.dto.js';
import { SERVICE_NAMES, type AttemptStatus, type DeliveryEvent } from './restservice.entities.js';

/*
 * What the rest-service routes answer (docs/api-conventions.md §Rest services); what they take
 * is in restservice.dto.ts.
 */

/** A rest service as the API shows it; the fields of a kind appear only for that kind. */
export class RestServiceBody {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'integer' })
  xform: number;

  @ApiProperty({ type: 'string', enum: [...SERVICE_NAMES] })
  name: string;

  @ApiProperty({ type: 'string', format: 'uri' })
  service_url: string;

  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'messaging; `********` for callers below editor and for Bearer callers.' })
  auth_token?: string | null;

  @ApiPropertyOptional({ type: 'string', description: 'messaging' })
  flow_title?: string;

  @ApiPropertyOptional({ type: 'string', description: 'messaging' })
  flow_uuid?: string;

  @ApiPropertyOptional({ type: 'string', description: 'messaging' })
  contacts?: string;

  @ApiPropertyOptional({ type: 'string', description: 'spreadsheet' })
  spreadsheet_title?: string;

  @ApiPropertyOptional({ type: 'boolean', description: 'spreadsheet' })
  send_existing_data?: boolean;

  @ApiPropertyOptional({ type: 'boolean', description: 'spreadsheet' })
  sync_updates?: boolean;

  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'spreadsheet' })
  redirect_uri?: string | null;

  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'spreadsheet: the linked sheet, once created.' })
  spreadsheet_id?: string | null;

  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'spreadsheet: the replay of the last back-fill (linking with send_existing_data, or PATCH send_existing_data: true); its progress reads at GET .../replays/{id}.' })
  backfill_replay?: number | null;

  @ApiPropertyOptional({ type: 'string', description: 'dataset_service' })
  dataset_id?: string;

  @ApiPropertyOptional({ type: 'string', format: 'uri', description: 'spreadsheet, on create: the sheet provider consent to visit when it has no grant for the caller yet.' })
  authorization_url?: string;

  @ApiPropertyOptional({ type: 'array', items: { type: 'string' }, nullable: true, description: 'generic_json, generic_xml: the fields payloads are cut down to (null: all).' })
  fields?: string[] | null;

  @ApiProperty({ type: 'array', items: { type: 'string' }, description: 'Names of the extra request headers (their values are write-only).' })
  header_names?: string[];

  @ApiProperty({ type: 'boolean', description: 'Basic credentials are set (they are write-only).' })
  basic_auth_enabled?: boolean;

  @ApiProperty({ type: 'integer', nullable: true, description: "Requests per minute; null: the kind's default." })
  rate_limit_per_minute?: number | null;

  @ApiPropertyOptional({ type: 'string', enum: [...ENCRYPTED_SUBMISSIONS], nullable: true, description: 'Encrypted submissions: skip, envelope or decrypted; null: the default.' })
  encrypted_submissions?: EncryptedSubmissionsPolicy | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'The limit in force (the kind default when rate_limit_per_minute is null); null: unlimited.' })
  effective_rate_limit_per_minute?: number | null;

  @ApiProperty({ type: 'number', nullable: true, minimum: 0, maximum: 1, description: 'Share of the attempts of the last 24 h that succeeded; null without attempts.' })
  success_rate_24h?: number | null;

  @ApiProperty({ type: 'integer', nullable: true, description: '95th percentile of the request latency of the last 24 h, in ms; null without attempts.' })
  p95_latency_ms_24h?: number | null;

  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...DELIVERY_EVENTS] }, description: 'The submission events sent to this service.' })
  events: DeliveryEvent[];

  @ApiProperty({ type: 'boolean', description: 'A signing secret is set (the secret itself is write-only).' })
  signing_enabled?: boolean;

  @ApiProperty({ type: 'boolean' })
  active?: boolean;

  @ApiProperty({ type: 'string', nullable: true })
  inactive_reason?: string | null;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true })
  last_delivery_at?: string | null;

  @ApiProperty({ type: 'string', nullable: true, enum: ['success', 'failed', 'retrying', 'skipped'] })
  last_status?: string | null;

  @ApiProperty({ type: 'integer', description: 'Consecutive failed attempts.' })
  failure_count?: number;

  @ApiProperty({ type: 'string', format: 'date-time' })
  date_created?: string;

  @ApiProperty({ type: 'string', format: 'date-time' })
  date_modified?: string;
}

/** One attempt of the delivery log (docs/api-conventions.md §Rest services). */
export class DeliveryLogEntry {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'string', format: 'uuid', description: 'Sent as X-Delivery-Id; the same for every attempt of a delivery.' })
  delivery_id: string;

  @ApiProperty({ type: 'integer' })
  attempt: number;

  @ApiProperty({ type: 'string', enum: [...ATTEMPT_STATUSES] })
  status: AttemptStatus;

  @ApiProperty({ type: 'integer', nullable: true })
  status_code: number | null;

  @ApiProperty({ type: 'integer', nullable: true })
  latency_ms: number | null;

  @ApiProperty({ type: 'string', nullable: true })
  error: string | null;

  @ApiProperty({ type: 'string', nullable: true })
  response_excerpt: string | null;

  @ApiProperty({ type: 'string', enum: ['created', 'updated', 'deleted'] })
  event: string;

  @ApiProperty({ type: 'string', format: 'date-time' })
  created_at: string;
}

/** 202 to a retry of one delivery. */
export class RetryAck {
  @ApiProperty({ type: 'string' })
  detail: string;

  @ApiProperty({ type: 'string', format: 'uuid' })
  delivery_id: string;
}

/** 202 to a retry of every failed delivery. */
export class RetryFailedAck {
  @ApiProperty({ type: 'string' })
  detail: string;

  @ApiProperty({ type: 'integer', description: 'Deliveries queued again.' })
  count: number;
}

/** The request test-fire sent, secrets masked. */
export class TestFireRequest {
  @ApiProperty({ type: 'string', enum: ['GET', 'POST'] })
  method: string;

  @ApiProperty({ type: 'string', format: 'uri' })
  url: string;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'Every header sent; Authorization and the extra headers show `********` for their values.' })
  headers: Record<string, string>;

  @ApiProperty({ type: 'string', nullable: true, description: 'The body as sent (UTF-8), or null (GET).' })
  body: string | null;
}

export class TestFireResponse {
  @ApiProperty({ type: 'integer' })
  status: number;

  @ApiProperty({ type: 'string', description: 'The first 1,000 characters of the answer.' })
  body_excerpt: string;
}

/** 200 to `POST /api/v1/restservices/{pk}/test`. */
export class TestFireBody {
  @ApiProperty({ type: TestFireRequest })
  request: TestFireRequest;

  @ApiProperty({ type: TestFireResponse, nullable: true, description: 'null when no answer came (refused address, connection error, timeout).' })
  response: TestFireResponse | null;

  @ApiProperty({ type: 'string', nullable: true })
  error: string | null;
}
