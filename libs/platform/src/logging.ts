import type { LoggerOptions } from 'pino';

/**
 * Paths pino removes from every log line. Credentials reach us in headers, cookies, bodies
 * and query strings; none of them may be logged.
 */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  '*.password',
  '*.client_secret',
  '*.access_token',
  '*.refresh_token',
  '*.id_token',
  '*.auth_token',
  '*.token',
  '*.code_verifier',
  '*.signing_secret',
  '*.passphrase',
  '*.private_key',
];

export function baseLoggerOptions(service: string, level: string): LoggerOptions {
  return {
    level,
    base: { service },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    timestamp: () => `,"time":"${new Date().toISOString()}"`,
  };
}

/** Strips query strings from logged URLs: codes, states and tokens travel there. */
export function safeUrl(url: string | undefined): string {
  if (!url) return '';
  const i = url.indexOf('?');
  return i === -1 ? url : `${url.slice(0, i)}?[redacted]`;
}
