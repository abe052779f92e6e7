import { z } from 'zod';

/**
 * The client address behind `hops` trusted proxies (docs/security.md, "Client addresses"): the
 * entry that many places from the right of `X-Forwarded-For` + the socket address. Each proxy
 * appends the address it received the request from, so only the right-most `hops` entries were
 * written by ours; anything to their left came from the client and is never trusted. The same
 * rule as Express's `trust proxy = <number>`.
 */
export function clientAddress(forwardedFor: string | string[] | undefined, socketAddress: string | undefined, hops: number): string {
  const header = Array.isArray(forwardedFor) ? forwardedFor.join(',') : (forwardedFor ?? '');
  const chain = [socketAddress ?? 'unknown', ...header.split(',').map((s) => s.trim()).filter(Boolean).reverse()];
  return chain[Math.min(Math.max(hops, 0), chain.length - 1)];
}

/**
 * `<PREFIX>_TRUSTED_PROXY_HOPS` (0-10) and the older `<PREFIX>_TRUST_PROXY` flag it replaces,
 * read as 1 hop (true) or none (false) when the count is not given. Neither given: 0, the socket
 * address, because a service reached directly must not take the client's own word for its
 * address; the charts set the hops of their ingress.
 */
export function trustedProxyHopsFields() {
  return {
    hops: z.coerce.number().int().min(0, 'must be 0 (no proxy) to 10').max(10, 'must be 0 (no proxy) to 10').optional(),
    legacyFlag: z.enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' }).optional(),
  };
}

export function trustedProxyHops(hops: number | undefined, legacyFlag: string | undefined): number {
  if (hops !== undefined) return hops;
  if (legacyFlag === undefined) return 0;
  return legacyFlag === 'true' || legacyFlag === '1' || legacyFlag === 'yes' ? 1 : 0;
}
