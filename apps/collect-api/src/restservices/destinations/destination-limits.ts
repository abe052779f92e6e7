import type { RestServiceEntity, ServiceName } from '../restservice.entities.js';

/**
 * Requests per minute a destination gets when its service sets no `rate_limit_per_minute`
 * (docs/restservices.md, "Limits"): a flow-start API allows about 2,500 calls an hour per
 * organisation (40/min), the sheet provider 60 writes a minute per user; every other kind gets
 * FORWARD_DEFAULT_RATE_LIMIT_PER_MINUTE, so no destination a user names is sent to unpaced
 * (docs/security.md, "Rate limits, quotas and forwarding input").
 */
export const DEFAULT_RATE_LIMITS: Partial<Record<ServiceName, number>> = { messaging: 40, spreadsheet: 60 };

/** The limit in force for a service, or null when it is unlimited (a default of 0). */
export function effectiveRateLimit(service: Pick<RestServiceEntity, 'name' | 'rateLimitPerMinute'>, defaultPerMinute: number): number | null {
  return service.rateLimitPerMinute ?? DEFAULT_RATE_LIMITS[service.name] ?? (defaultPerMinute > 0 ? defaultPerMinute : null);
}
