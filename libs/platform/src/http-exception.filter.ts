import { randomUUID } from 'node:crypto';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { ErrorBody } from '@collect/contracts';
import { NOT_FOUND_DETAIL } from '@collect/contracts';
import { isTransientDatabaseError } from './database-errors.js';
import { isOutOfFileHandles, isStorageFull } from './storage-errors.js';

type HttpRequestLike = { url?: string; originalUrl?: string };

type HttpResponseLike = {
  headersSent?: boolean;
  status(code: number): HttpResponseLike;
  setHeader(name: string, value: string): void;
  json(body: unknown): void;
  end(): void;
};

/** Errors thrown by body parsers (express/raw-body) carry a status and a type, not an HttpException. */
type ParserError = Error & { status?: number; statusCode?: number; type?: string; expose?: boolean };

const PARSER_DETAILS: Record<string, string> = {
  'entity.parse.failed': 'JSON parse error.',
  'entity.too.large': 'Request body is too large.',
  'encoding.unsupported': 'Unsupported content encoding.',
  'charset.unsupported': 'Unsupported charset.',
  'request.aborted': 'Request aborted.',
  'request.size.invalid': 'Request size did not match content length.',
};

/**
 * Turns every error into the body shapes of docs/api-conventions.md. Unknown errors become a 500 whose
 * body carries only an error id; the details go to the log under that id.
 */
export interface HttpErrorFilterOptions {
  /**
   * Paths of OAuth 2.0 endpoints (RFC 6749 §5.2): a 4xx raised before their handler runs (body
   * parser, body size, rate limit) is answered `{error, error_description}` there, so OAuth
   * clients can read it.
   */
  oauthPaths?: string[];
}

@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpErrorFilter');

  constructor(private readonly options: HttpErrorFilterOptions = {}) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<HttpResponseLike>();
    if (res.headersSent) {
      res.end();
      return;
    }
    const req = host.switchToHttp().getRequest<HttpRequestLike | undefined>();
    const { status, body, headers } = this.toResponse(exception);
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.status(status).json(this.isOAuthPath(req) && status < 500 ? oauthErrorBody(status, body) : body);
  }

  private isOAuthPath(req: HttpRequestLike | undefined): boolean {
    if (!this.options.oauthPaths?.length || !req) return false;
    const path = (req.originalUrl ?? req.url ?? '').split('?')[0].replace(/\/+$/, '');
    return this.options.oauthPaths.includes(path);
  }

  toResponse(exception: unknown): { status: number; body: ErrorBody & { error_id?: string }; headers: Record<string, string> } {
    if (exception instanceof HttpException) {
      // Nest wraps body-parser errors in a BadRequestException whose message is the raw parser text.
      const cause = exception.cause as ParserError | undefined;
      const parserDetail = cause?.type ? PARSER_DETAILS[cause.type] : undefined;
      if (parserDetail) return { status: exception.getStatus(), body: { detail: parserDetail }, headers: {} };
      const status = exception.getStatus();
      return { status, body: normaliseHttpExceptionBody(status, exception.getResponse()), headers: headersOf(exception) };
    }
    const parserError = exception as ParserError;
    const parserStatus = parserError?.status ?? parserError?.statusCode;
    if (typeof parserStatus === 'number' && parserStatus >= 400 && parserStatus < 500) {
      const detail = (parserError.type && PARSER_DETAILS[parserError.type]) ?? (parserError.expose ? parserError.message : defaultDetail(parserStatus));
      return { status: parserStatus, body: { detail }, headers: {} };
    }
    const errorId = randomUUID();
    if (isTransientDatabaseError(exception)) {
      // The database could not do it now (docs/api-conventions.md, "Errors"): logged, answered 503.
      this.logger.warn({ err: exception, errorId }, 'database unavailable for a request');
      return { status: HttpStatus.SERVICE_UNAVAILABLE, body: { detail: 'The database is busy; try again shortly.', error_id: errorId }, headers: { 'Retry-After': '1' } };
    }
    if (isOutOfFileHandles(exception)) {
      // No file handle left under load (docs/api-conventions.md, "Errors"): logged, answered 503 like a busy database.
      this.logger.warn({ err: exception, errorId }, 'no file handle left for a request');
      return { status: HttpStatus.SERVICE_UNAVAILABLE, body: { detail: 'The server is busy; try again shortly.', error_id: errorId }, headers: { 'Retry-After': '1' } };
    }
    if (isStorageFull(exception)) {
      // No room for what the request brought (docs/api-conventions.md, "Errors"): nothing of it was kept; an operator must act.
      this.logger.error({ err: exception, errorId }, 'storage full: a request was refused');
      return { status: HttpStatus.INSUFFICIENT_STORAGE, body: { detail: 'The server has no room left to store this; nothing of it was kept. Send it again later.', error_id: errorId }, headers: { 'Retry-After': '60' } };
    }
    this.logger.error({ err: exception, errorId }, 'unhandled error');
    return { status: HttpStatus.INTERNAL_SERVER_ERROR, body: { detail: 'Internal server error.', error_id: errorId }, headers: {} };
  }
}

/** RFC 6749 §5.2 error codes for refusals that happen before an OAuth handler runs. */
export function oauthErrorBody(status: number, body: ErrorBody): { error: string; error_description: string } {
  const description = 'detail' in body && typeof body.detail === 'string' ? body.detail : Object.entries(body).map(([k, v]) => `${k}: ${(v as string[]).join(' ')}`).join('; ');
  const error = status === 401 ? 'invalid_client' : status === 429 ? 'slow_down' : 'invalid_request';
  return { error, error_description: description || defaultDetail(status) };
}

function headersOf(exception: HttpException): Record<string, string> {
  const headers = (exception as HttpException & { headers?: Record<string, string> }).headers;
  return headers && typeof headers === 'object' ? headers : {};
}

function normaliseHttpExceptionBody(status: number, response: string | object): ErrorBody {
  if (status === HttpStatus.NOT_FOUND && isNestDefault(response)) return { detail: NOT_FOUND_DETAIL };
  if (typeof response === 'string') return { detail: response };
  const obj = response as Record<string, unknown>;
  // Lists of messages beside `detail` stay (an XLSForm conversion failure: `errors`, `warnings`).
  if (typeof obj.detail === 'string') return { detail: obj.detail, ...messageListsOf(obj) };
  if (isFieldErrors(obj)) return obj;
  // Nest's default shape: { statusCode, message, error }, message may be a list (ValidationPipe).
  const message = obj.message;
  if (Array.isArray(message)) return { detail: message.map(String).join('; ') };
  if (typeof message === 'string') return { detail: message };
  return { detail: defaultDetail(status) };
}

function messageListsOf(obj: Record<string, unknown>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (key !== 'detail' && Array.isArray(value) && value.every((m) => typeof m === 'string')) out[key] = value as string[];
  }
  return out;
}

function isNestDefault(response: string | object): boolean {
  if (typeof response === 'string') return true;
  const obj = response as Record<string, unknown>;
  return typeof obj.detail !== 'string' && !isFieldErrors(obj);
}

function isFieldErrors(obj: Record<string, unknown>): obj is Record<string, string[]> {
  const values = Object.values(obj);
  return values.length > 0 && !('statusCode' in obj) && values.every((v) => Array.isArray(v) && v.every((m) => typeof m === 'string'));
}

function defaultDetail(status: number): string {
  switch (status) {
    case 400: return 'Bad request.';
    case 401: return 'Authentication credentials were not provided.';
    case 403: return 'You do not have permission to perform this action.';
    case 404: return NOT_FOUND_DETAIL;
    case 405: return 'Method not allowed.';
    case 406: return 'Could not satisfy the request Accept header.';
    case 413: return 'Request body is too large.';
    case 415: return 'Unsupported media type.';
    case 429: return 'Request was throttled.';
    default: return 'Request failed.';
  }
}
