import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';
import { Bool, Check, Choice, Int, MAX_DB_ID, Text, TextList } from '@collect/contracts';
import { ENCRYPTED_SUBMISSIONS, type EncryptedSubmissionsPolicy } from '../encrypted-submissions/envelope-forwarding.js';
import { PageQueryDto } from '../submissions/pagination.js';
import { DELIVERY_EVENTS, defaultEvents, normalizedEvents } from './delivery/delivery-events.js';
import { SERVICE_NAMES, type AttemptStatus, type DeliveryEvent, type ServiceName, type ServiceOptions } from './restservice.entities.js';
import { forbiddenHeaderName } from './service-credentials.js';

const XPATH = /^[A-Za-z_][A-Za-z0-9_.-]*(\/[A-Za-z_][A-Za-z0-9_.-]*)*$/;
const MAX_FIELDS = 500;
const MAX_HEADERS = 20;
/** RFC 9110 token characters. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
/**
 * RFC 9110 field-value characters (HTAB, SP, visible ASCII, obs-text) less the C1 controls
 * (U+0080-U+009F): what Node writes into a request header, without control characters.
 * Anything else (a control character, a line break, a bidi control or any character above
 * U+00FF, which Node refuses to send) is refused here with 400, not found out when a delivery or a test-fire is sent
 * (docs/security.md, "Rate limits, quotas and forwarding input").
 */
export const HTTP_FIELD_VALUE = /^[\t\x20-\x7e\xa0-\xff]*$/;
export const ATTEMPT_STATUSES: AttemptStatus[] = ['success', 'failed', 'retrying', 'skipped'];
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
 * A rest service as `POST` creates it and `PUT` replaces it (docs/api-conventions.md §Rest services). The
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
  @Text({ required: true, blank: 'missing', max: 500, pattern: HTTP_FIELD_VALUE, patternMessage: 'Must be characters allowed in an HTTP header: no control characters or line breaks.', description: 'messaging: sent as `Authorization: Token <auth_token>`; encrypted at rest.' })
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

  @kind('generic_json', 'generic_xml')
  @TextList({ nullable: true, maxItems: MAX_FIELDS, unique: true, maxLength: 255, pattern: XPATH, patternMessage: 'Enter an xpath such as "group/question".', description: 'generic_json, generic_xml: send only these form fields (xpaths; a group selects its fields) plus every `_`-prefixed metadata field. null sends all.' })
  fields?: string[] | null;

  /** Write-only. `null` or `{}` removes them; missing leaves them as they are. */
  // Not @AnyObject: its value is set aside during validation (ApiValidationPipe), and these
  // checks must see it. A `__proto__` name is dropped by the pipe (never a header anyway).
  @Transform(({ obj, key }) => (obj as Record<string, unknown>)[key], { toClassOnly: true })
  @ValidateIf((_dto, value) => value !== undefined && value !== null)
  @Check((v) => headersProblem(v) === null, { message: (args) => headersProblem(args.value) ?? '' })
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, nullable: true, description: `Write-only: extra request headers (at most ${MAX_HEADERS}), encrypted at rest; responses list their names in header_names. Host, Content-Length, Content-Type, Transfer-Encoding, Connection, X-Submission-Event, webhook-* and X-Delivery-* cannot be set.` })
  headers?: Record<string, string> | null;

  /** Write-only with basic_auth_password; `null` or `""` removes the credentials. */
  @Transform(({ value }) => (value === '' ? null : value))
  @Text({ nullable: true, max: 255, pattern: /^[^:\r\n\u0000]*$/, patternMessage: 'A Basic user name cannot contain ":" or line breaks.', description: 'Write-only: the user name of HTTP Basic credentials sent with every request (encrypted at rest). null removes the credentials.' })
  basic_auth_username?: string | null;

  @Text({ nullable: true, max: 1000, pattern: /^[^\r\n\u0000]*$/, patternMessage: 'A Basic password cannot contain line breaks.', description: 'Write-only: the password of the Basic credentials (encrypted at rest, never returned or logged).' })
  basic_auth_password?: string | null;

  @Int({ nullable: true, min: 1, max: 100_000, message: 'Must be an integer from 1 to 100000, or null.', description: 'Requests per minute to this destination, shared by every worker. null: the kind\'s default (messaging 40, spreadsheet 60, others FORWARD_DEFAULT_RATE_LIMIT_PER_MINUTE, 600 unless configured).' })
  rate_limit_per_minute?: number | null;

  @Choice(ENCRYPTED_SUBMISSIONS, { nullable: true, choiceMessage: `One of ${ENCRYPTED_SUBMISSIONS.join(', ')}, or null.`, description: 'Encrypted submissions (docs/encryption.md "Forwarding"): `skip`, `envelope` (generic_json: the metadata, the manifest\'s key and signature, the parts\' download addresses) or `decrypted` (a form whose key the server holds). null: `decrypted` when the server holds the key, else `skip`.' })
  encrypted_submissions?: EncryptedSubmissionsPolicy | null;

  @Bool({ message: 'Must be a boolean.', description: '`true` re-enables a disabled service and resumes its pending deliveries.' })
  active?: boolean;

  @TextList({
    nullable: true, minItems: 1, maxItems: DELIVERY_EVENTS.length, unique: true, pattern: /^(created|updated|deleted|entity_created|entity_updated|entity_deleted)$/,
    patternMessage: 'One of created, updated, deleted, entity_created, entity_updated, entity_deleted.',
    description: 'The events sent to this service (header `X-Submission-Event`). Missing or null: the kind\'s default (messaging, health_forwarder: created; generic_json, generic_xml, dataset_service: created and updated; spreadsheet: created, plus updated and deleted with sync_updates). `entity_*`: changes of the entities of the lists the form uses (generic_json only; docs/entities.md).',
  })
  events?: DeliveryEvent[] | null;
}


/** Why an extra-headers object is refused, or null when it is fine. */
export function headersProblem(value: unknown): string | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'Expected an object of header names and values.';
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) return `At most ${MAX_HEADERS} headers.`;
  const seen = new Set<string>();
  for (const [name, v] of entries) {
    if (!HEADER_NAME.test(name)) return `"${name.slice(0, 100)}" is not a valid header name.`;
    if (forbiddenHeaderName(name)) return `The header "${name}" cannot be set.`;
    if (seen.has(name.toLowerCase())) return `The header "${name}" is given twice.`;
    seen.add(name.toLowerCase());
    if (typeof v !== 'string') return `The value of "${name}" must be a string.`;
    if (v.length > 4096 || !HTTP_FIELD_VALUE.test(v)) return `The value of "${name}" must be at most 4096 characters allowed in an HTTP header (no control characters or line breaks).`;
  }
  return null;
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
  /** generic_json/generic_xml only; null = every field. */
  fields: string[] | null;
  /** undefined = unchanged, null or {} = remove. */
  headers?: Record<string, string> | null;
  /** undefined = unchanged, null = remove. */
  basicAuth?: { username: string; password: string } | null;
  rateLimitPerMinute: number | null;
  encryptedSubmissions: EncryptedSubmissionsPolicy | null;
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
    fields: (dto.name === 'generic_json' || dto.name === 'generic_xml') && dto.fields?.length ? dto.fields : null,
    headers: dto.headers,
    // Checked as a pair by RestServicesService (a password alone, or a user name alone, is a 400).
    basicAuth: dto.basic_auth_username === undefined && dto.basic_auth_password === undefined ? undefined
      : dto.basic_auth_username === null ? null
      : { username: dto.basic_auth_username ?? '', password: dto.basic_auth_password ?? '' },
    rateLimitPerMinute: dto.rate_limit_per_minute ?? null,
    encryptedSubmissions: dto.encrypted_submissions ?? null,
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
