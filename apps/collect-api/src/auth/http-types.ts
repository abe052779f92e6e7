import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The few request/response members auth code uses. Express adds them at runtime; declaring
 * them here spares a dependency on @types/express.
 */
export interface HttpRequest extends IncomingMessage {
  method: string;
  url: string;
  query: Record<string, unknown>;
  body?: unknown;
  user?: unknown;
  /** Express's client address (`trust proxy` = HTTP_TRUSTED_PROXY_HOPS). */
  ip?: string;
}

/** The client's address as every per-address limit counts it: Express's, behind the trusted proxy hops. */
export function requestAddress(req: { ip?: string; socket?: { remoteAddress?: string } }): string {
  return req.ip ?? req.socket?.remoteAddress ?? 'unknown';
}

export interface HttpResponse extends ServerResponse {
  status(code: number): this;
  json(body: unknown): this;
  send(body: unknown): this;
  type(contentType: string): this;
  redirect(status: number, url: string): void;
  append(field: string, value: string): this;
  cookie(name: string, value: string, options: Record<string, unknown>): this;
  clearCookie(name: string, options: Record<string, unknown>): this;
}

export type NextFn = (err?: unknown) => void;
