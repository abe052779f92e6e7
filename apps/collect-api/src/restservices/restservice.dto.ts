import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';
import { Bool, Choice, Int, MAX_DB_ID, Text, TextList } from '@collect/contracts';
import { PageQueryDto } from '../submissions/pagination.js';
import { DELIVERY_EVENTS, defaultEvents, normalizedEvents } from './delivery-events.js';
import { SERVICE_NAMES, type AttemptStatus, type DeliveryEvent, type ServiceName, type ServiceOptions } from './restservice.entities.js';

const ATTEMPT_STATUSES: AttemptStatus[] = ['success', 'failed', 'retrying', 'skipped'];
const kind = (...names: ServiceName[]) => ValidateIf((dto: RestServiceDto) => names.includes(dto.name));

function absoluteHttpUrl(value: string): URL | null {
  try {
    const url = new URL(value);
    return ['http:', 'https:'].includes(url.protocol) && url.hostname ? url : null;
  } catch {
    return null;
  }
}

/** `whsec_` + base64 of 24 to 64 random bytes (Standard Webhooks). */
function isSigningSecret(value: string): boolean {
  if (!/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(value)) return false;
  const raw = Buffer.from(value.slice(6), 'base64');
  return raw.length >= 24 && raw.length <= 64;
}

/**
 * A rest service as `POST` creates it and `PUT` replaces it (decisions.md §Rest services). The
 * fields of one kind are checked only for that kind (`messaging` needs `auth_token`,
 * `flow_uuid`, `contacts`; `spreadsheet` needs `spreadsheet_title`); others are dropped.
 * Unknown fields are dropped, so a client may send back what it read (docs/security.md).
 */
export class RestServiceDto {
  @Int({ required: true, blankIsMissing: true, min: 1, max: MAX_DB_ID, message: 'A valid integer is required.', description: 'A form the caller may edit.' })
  xform: number;

  @Choice(SERVICE_NAMES, { required: true, blankIsMissing: true, choiceMessage: (args) => `"${String(args.value).slice(0, 100)}" is not a valid choice; one of ${SERVICE_NAMES.join(', ')}.` })
  name: ServiceName;

  /** Required except for `spreadsheet` (the sheet provider's address is the operator's). */
  @ValidateIf((dto: RestServiceDto) => dto.name !== 'spreadsheet' || dto.service_url !== undefined)
  @Text({
    required: true,
    blank: 'missing',
    max: 2000,
    format: 'uri',
    check: [
      { test: (v) => absoluteHttpUrl(v) !== null, message: 'Enter an absolute http(s) URL.' },
      { test: (v) => !absoluteHttpUrl(v)?.username && !absoluteHttpUrl(v)?.password, message: 'Credentials in the URL are not accepted; use auth_token or signing_secret.' },
    ],
    description: 'Where deliveries go; loopback, link-local and private networks only where FORWARD_ALLOW_PRIVATE_NETWORKS allows them.',
  })
  service_url?: string;

  @kind('messaging')
  @Text({ required: true, blank: 'missing', max: 500, description: 'messaging: sent as `Authorization: Token <auth_token>`; encrypted at rest.' })
  auth_token?: string;

  @kind('messaging')
  @Text({ required: true, blank: 'missing', max: 255, description: 'messaging: the flow to start.' })
  flow_uuid?: string;

  @kind('messaging')
  @Text({ required: true, blank: 'missing', max: 5000, description: 'messaging: comma-separated contacts.' })
  contacts?: string;

  @kind('messaging')
  @Text({ blank: 'missing', max: 255 })
  flow_title?: string;

  @kind('spreadsheet')
  @Text({ required: true, blank: 'missing', max: 255 })
  spreadsheet_title?: string;

  @kind('spreadsheet')
  @Bool({ fromString: true, nullable: true, message: 'Must be a boolean.', default: true, description: 'spreadsheet: back-fill the existing submissions.' })
  send_existing_data?: boolean | null;

  @kind('spreadsheet')
  @Bool({ fromString: true, nullable: true, message: 'Must be a boolean.', default: true, description: 'spreadsheet: rewrite the row of an edited submission.' })
  sync_updates?: boolean | null;

  @kind('spreadsheet')
  @Text({ blank: 'missing', max: 2000, description: "spreadsheet: overrides the sheet provider's OAuth 2.0 consent redirect." })
  redirect_uri?: string;

  @kind('dataset_service')
  @Text({ blank: 'missing', max: 100 })
  dataset_id?: string;

  /** Write-only. `null` or `""` removes it; missing leaves it as it is. */
  @Transform(({ value }) => (value === '' ? null : value))
  @Text({
    nullable: true,
    message: 'Must be "whsec_" followed by 24 to 64 base64-encoded random bytes.',
    check: { test: isSigningSecret, message: 'Must be "whsec_" followed by 24 to 64 base64-encoded random bytes.' },
    description: 'Write-only: signs deliveries (Standard Webhooks). null removes it.',
  })
  signing_secret?: string | null;

  @Bool({ message: 'Must be a boolean.', description: '`true` re-enables a disabled service and resumes its pending deliveries.' })
  active?: boolean;

  @TextList({
    nullable: true, minItems: 1, maxItems: DELIVERY_EVENTS.length, unique: true, pattern: /^(created|updated|deleted)$/, patternMessage: 'One of created, updated, deleted.',
    description: 'The submission events sent to this service (header `X-Submission-Event`). Missing or null: the kind\'s default (messaging, health_forwarder: created; generic_json, generic_xml, dataset_service: created and updated; spreadsheet: created, plus updated and deleted with sync_updates).',
  })
  events?: DeliveryEvent[] | null;
}

/**
 * `PATCH`: any of the fields. The stored service is merged with them and the result checked as a
 * whole with RestServiceDto (RestServicesService.update).
 */
export class RestServicePatchDto extends PartialType(RestServiceDto, { skipNullProperties: false }) {}

/** A validated create/replace payload. */
export interface RestServiceInput {
  xform: number;
  name: ServiceName;
  serviceUrl: string;
  options: ServiceOptions;
  /** messaging only; undefined = unchanged. */
  authToken?: string | null;
  /** undefined = unchanged, null = remove. */
  signingSecret?: string | null;
  active?: boolean;
  /** The events sent, the kind's default when the client named none. */
  events: DeliveryEvent[];
}

/** The stored shape of a checked payload. */
export function restServiceInput(dto: RestServiceDto): RestServiceInput {
  const options: ServiceOptions = {};
  if (dto.name === 'messaging') {
    options.flow_uuid = dto.flow_uuid;
    options.contacts = dto.contacts;
    options.flow_title = dto.flow_title ?? '';
  }
  if (dto.name === 'spreadsheet') {
    options.spreadsheet_title = dto.spreadsheet_title;
    options.send_existing_data = dto.send_existing_data ?? true;
    options.sync_updates = dto.sync_updates ?? true;
    if (dto.redirect_uri !== undefined) options.redirect_uri = dto.redirect_uri;
  }
  if (dto.name === 'dataset_service' && dto.dataset_id !== undefined) options.dataset_id = dto.dataset_id;
  return {
    xform: dto.xform,
    name: dto.name,
    serviceUrl: dto.service_url ?? '',
    options,
    authToken: dto.name === 'messaging' ? dto.auth_token : undefined,
    signingSecret: dto.signing_secret,
    active: dto.active,
    events: dto.events ? normalizedEvents(dto.events) : defaultEvents(dto.name, options),
  };
}

/** `GET /api/v1/restservices`. */
export class RestServiceListQueryDto {
  @Int({ min: 1, max: MAX_DB_ID, message: 'Invalid value for xform. It must be a positive integer.', asDetail: true, description: 'Only the services of this form.' })
  xform?: number;
}

/** `GET /api/v1/restservices/{pk}/deliveries`. */
export class DeliveryLogQueryDto extends PageQueryDto {
  @Choice(ATTEMPT_STATUSES, { choiceMessage: `One of ${ATTEMPT_STATUSES.join(', ')}.` })
  status?: AttemptStatus;
}

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

  @ApiPropertyOptional({ type: 'string', description: 'dataset_service' })
  dataset_id?: string;

  @ApiPropertyOptional({ type: 'string', format: 'uri', description: 'spreadsheet, on create: the sheet provider consent to visit when it has no grant for the caller yet.' })
  authorization_url?: string;

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

/** One attempt of the delivery log (decisions.md §Operator interfaces). */
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
