import { Inject, Injectable } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { SecretBox } from '../crypto/secrets.js';
import type { OutgoingRequest } from './forwarders/index.js';
import type { RestServiceEntity } from './restservice.entities.js';

/** What a stored third-party secret reads as wherever it may not be shown. */
export const MASKED_SECRET = '********';

/**
 * Header names a service may not set (docs/restservices.md, "Auth"): framing and routing
 * headers the sender owns, and the delivery/signature headers receivers rely on.
 */
export function forbiddenHeaderName(name: string): boolean {
  const n = name.toLowerCase();
  return ['host', 'content-length', 'content-type', 'transfer-encoding', 'connection', 'x-submission-event'].includes(n) || n.startsWith('webhook-') || n.startsWith('x-delivery-');
}

/** The decrypted write-only secrets of a service. */
export interface ServiceSecrets {
  /** messaging `auth_token`. */
  authToken: string | null;
  /** Standard Webhooks `whsec_...`. */
  signingSecret: string | null;
  /** Extra request headers. */
  headers: Record<string, string>;
  basicAuth: { username: string; password: string } | null;
}

/**
 * Encrypts and decrypts the write-only secrets of a service with COLLECT_SECRET_KEY
 * (AES-256-GCM, docs/security.md) and puts them on a request at send time only, so nothing
 * built from a submission (a payload snapshot, a log line) ever holds them.
 */
@Injectable()
export class ServiceCredentials {
  private readonly box: SecretBox;

  constructor(@Inject(COLLECT_CONFIG) config: Pick<CollectConfig, 'COLLECT_SECRET_KEY'>) {
    this.box = new SecretBox(config.COLLECT_SECRET_KEY);
  }

  encrypt(plain: string): string {
    return this.box.encrypt(plain);
  }

  decrypt(enc: string | null): string | null {
    return enc ? this.box.decrypt(enc) : null;
  }

  encryptHeaders(headers: Record<string, string>): string {
    return this.box.encrypt(JSON.stringify(headers));
  }

  encryptBasic(username: string, password: string): string {
    return this.box.encrypt(JSON.stringify({ username, password }));
  }

  secrets(service: RestServiceEntity): ServiceSecrets {
    const basic = parseObject(this.decrypt(service.basicAuthEnc));
    return {
      authToken: this.decrypt(service.authTokenEnc),
      signingSecret: this.decrypt(service.signingSecretEnc),
      headers: parseObject(this.decrypt(service.headersEnc)) as Record<string, string>,
      basicAuth: typeof basic.username === 'string' && typeof basic.password === 'string' ? { username: basic.username, password: basic.password } : null,
    };
  }
}

function parseObject(json: string | null): Record<string, unknown> {
  if (!json) return {};
  try {
    const v = JSON.parse(json) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The forwarder's request with the service's extra headers and Basic credentials on top
 * (Basic last: it is the `Authorization` the user asked for). Header names are matched
 * case-insensitively so one value per name goes out.
 */
export function withServiceAuth(req: OutgoingRequest, secrets: Pick<ServiceSecrets, 'headers' | 'basicAuth'>): OutgoingRequest {
  const headers: Record<string, string> = { ...req.headers };
  const set = (name: string, value: string) => {
    for (const k of Object.keys(headers)) if (k.toLowerCase() === name.toLowerCase()) delete headers[k];
    headers[name] = value;
  };
  for (const [name, value] of Object.entries(secrets.headers)) if (!forbiddenHeaderName(name)) set(name, value);
  if (secrets.basicAuth) set('Authorization', `Basic ${Buffer.from(`${secrets.basicAuth.username}:${secrets.basicAuth.password}`, 'utf8').toString('base64')}`);
  return { ...req, headers };
}

/**
 * A header set as test-fire shows it: `Authorization` keeps its scheme and hides the rest, the
 * service's own extra headers are hidden whole (they are write-only).
 */
export function maskHeaders(headers: Record<string, string>, secretNames: readonly string[]): Record<string, string> {
  const secret = new Set(secretNames.map((n) => n.toLowerCase()));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const n = name.toLowerCase();
    if (n === 'authorization') out[name] = /^\S+\s/.test(value) ? `${value.split(/\s/, 1)[0]} ${MASKED_SECRET}` : MASKED_SECRET;
    else out[name] = secret.has(n) ? MASKED_SECRET : value;
  }
  return out;
}
