import { HttpException, HttpStatus } from '@nestjs/common';
import type { FieldErrors } from './errors.js';

/** An HttpException that also sets response headers (WWW-Authenticate, Retry-After, ...). */
export class HttpErrorWithHeaders extends HttpException {
  constructor(status: number, detail: string, public readonly headers: Record<string, string>) {
    super({ detail }, status);
  }
}

export class UnauthorizedError extends HttpErrorWithHeaders {
  constructor(detail: string, scheme: string) {
    super(HttpStatus.UNAUTHORIZED, detail, { 'WWW-Authenticate': scheme });
  }
}

export class TooManyRequestsError extends HttpErrorWithHeaders {
  constructor(detail: string, retryAfterSeconds: number) {
    super(HttpStatus.TOO_MANY_REQUESTS, detail, { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
  }
}

/** 400 with `{"<field>": ["message"]}`. */
export class FieldValidationError extends HttpException {
  constructor(errors: FieldErrors) {
    super(errors, HttpStatus.BAD_REQUEST);
  }
}
