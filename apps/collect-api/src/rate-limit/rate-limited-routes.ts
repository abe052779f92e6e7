import { basicUsername, normalisedRoutePath } from '@collect/platform';
import type { CollectConfig } from '../config/collect-config.js';

export type RateLimitedRequest = {
  method?: string;
  path?: string;
  originalUrl?: string;
  route?: { path?: string };
  body?: unknown;
  /** Route parameters (set once Express has resolved the route). */
  params?: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** Express's client address (honours HTTP_TRUSTED_PROXY_HOPS). */
  ip?: string;
  socket?: { remoteAddress?: string };
};
type Req = RateLimitedRequest;

export interface RateLimitedRoute {
  method: string;
  /** The route path as the router declares it. */
  path: string;
  /** Requests per window from one address. */
  perIp: (c: CollectConfig) => number;
  /** Requests per window for one credential (client id, username); null: not counted per credential. */
  perCredential: (c: CollectConfig) => number;
  /** The credential a request names, or null. */
  credential: (req: Req) => string | null;
}

const field = (req: Req, name: string): string | null => {
  const body = req.body as Record<string, unknown> | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  return typeof v === 'string' && v ? v : null;
};

/**
 * The login and token endpoints and their limits. Add a row for a new endpoint that checks a
 * secret (a CAS callback, a token exchange); everything else is not rate limited here.
 */
export const RATE_LIMITED_ROUTES: RateLimitedRoute[] = [
  {
    method: 'POST', path: '/o/token',
    perIp: (c) => c.RATE_LIMIT_TOKEN_PER_IP, perCredential: (c) => c.RATE_LIMIT_TOKEN_PER_CLIENT,
    credential: (req) => basicUsername(String(req.headers.authorization ?? '')) ?? field(req, 'client_id'),
  },
  {
    method: 'POST', path: '/o/login',
    perIp: (c) => c.RATE_LIMIT_LOGIN_PER_IP, perCredential: (c) => c.RATE_LIMIT_LOGIN_PER_USERNAME,
    credential: (req) => field(req, 'username'),
  },
  {
    // A passphrase or private key is checked (docs/encryption.md "Decrypting without a server-held key"): counted per address and per form.
    method: 'POST', path: '/api/v1/forms/:pk/decrypt',
    perIp: (c) => c.RATE_LIMIT_DECRYPT_PER_IP, perCredential: (c) => c.RATE_LIMIT_DECRYPT_PER_FORM,
    // `7`, `07` and `007` name one form: counted under one key.
    credential: (req) => (req.params?.pk ? `form:${/^\d{1,10}$/.test(req.params.pk) ? Number(req.params.pk) : req.params.pk}` : null),
  },
];

/**
 * The row of the route Express resolved, or of the path as the client spelt it once normalised
 * (case, percent-encoding, slashes: docs/security.md, "Rate limits, quotas and forwarding input"),
 * so no spelling the router serves escapes its row.
 */
export function rateLimitedRoute(req: Req): RateLimitedRoute | undefined {
  const paths = [req.route?.path, req.originalUrl ?? req.path].filter((p): p is string => typeof p === 'string').map(normalisedRoutePath);
  return RATE_LIMITED_ROUTES.find((r) => r.method === req.method?.toUpperCase() && paths.includes(r.path));
}
