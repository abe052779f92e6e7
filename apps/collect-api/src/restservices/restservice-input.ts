import { SERVICE_NAMES, type ServiceName, type ServiceOptions } from './restservice.entities.js';

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
}

type Errors = Record<string, string[]>;

const REQUIRED = 'This field is required.';

/**
 * Field validation of a rest service payload (decisions.md §Rest services). Returns the input or
 * the field errors; `xform` is checked by the caller (it needs the role check).
 */
export function parseRestServiceInput(body: Record<string, unknown>, xform: number): { input: RestServiceInput } | { errors: Errors } {
  const errors: Errors = {};
  const add = (field: string, msg: string) => (errors[field] ??= []).push(msg);
  const str = (field: string, max: number, required: boolean): string | undefined => {
    const v = body[field];
    if (v === undefined || v === null || v === '') {
      if (required) add(field, REQUIRED);
      return undefined;
    }
    if (typeof v !== 'string') return void add(field, 'Must be a string.');
    if (v.length > max) return void add(field, `At most ${max} characters.`);
    return v;
  };
  const bool = (field: string, fallback: boolean): boolean => {
    const v = body[field];
    if (v === undefined || v === null) return fallback;
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
    add(field, 'Must be a boolean.');
    return fallback;
  };

  const name = body.name;
  if (name === undefined || name === null || name === '') add('name', REQUIRED);
  else if (typeof name !== 'string' || !(SERVICE_NAMES as readonly string[]).includes(name)) add('name', `"${String(name)}" is not a valid choice; one of ${SERVICE_NAMES.join(', ')}.`);

  const serviceUrl = str('service_url', 2000, name !== 'spreadsheet');
  if (serviceUrl !== undefined) {
    let url: URL | null = null;
    try {
      url = new URL(serviceUrl);
    } catch {
      /* reported below */
    }
    if (!url || !['http:', 'https:'].includes(url.protocol) || !url.hostname) add('service_url', 'Enter an absolute http(s) URL.');
    else if (url.username || url.password) add('service_url', 'Credentials in the URL are not accepted; use auth_token or signing_secret.');
  }

  const options: ServiceOptions = {};
  let authToken: string | undefined;
  if (name === 'messaging') {
    authToken = str('auth_token', 500, true);
    options.flow_uuid = str('flow_uuid', 255, true);
    options.contacts = str('contacts', 5000, true);
    options.flow_title = str('flow_title', 255, false) ?? '';
  }
  if (name === 'spreadsheet') {
    options.spreadsheet_title = str('spreadsheet_title', 255, true);
    options.send_existing_data = bool('send_existing_data', true);
    options.sync_updates = bool('sync_updates', true);
    const redirect = str('redirect_uri', 2000, false);
    if (redirect !== undefined) options.redirect_uri = redirect;
  }
  if (name === 'dataset_service') {
    const datasetId = str('dataset_id', 100, false);
    if (datasetId !== undefined) options.dataset_id = datasetId;
  }

  let signingSecret: string | null | undefined;
  if (body.signing_secret === null || body.signing_secret === '') signingSecret = null;
  else if (body.signing_secret !== undefined) {
    const s = body.signing_secret;
    const raw = typeof s === 'string' && /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(s) ? Buffer.from(s.slice(6), 'base64') : null;
    if (!raw || raw.length < 24 || raw.length > 64) add('signing_secret', 'Must be "whsec_" followed by 24 to 64 base64-encoded random bytes.');
    else signingSecret = s as string;
  }

  let active: boolean | undefined;
  if (body.active !== undefined) {
    if (typeof body.active !== 'boolean') add('active', 'Must be a boolean.');
    else active = body.active;
  }

  if (Object.keys(errors).length) return { errors };
  return { input: { xform, name: name as ServiceName, serviceUrl: serviceUrl ?? '', options, authToken, signingSecret, active } };
}
