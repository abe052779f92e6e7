import { BadRequestException, type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';

type RequestLike = { originalUrl?: string; url?: string; query?: unknown; body?: unknown; params?: unknown };

export const NUL_DETAIL = 'The request contains a NUL character (\\u0000), which no field accepts.';

/**
 * PostgreSQL text and jsonb cannot hold NUL: a `\u0000` anywhere in a query string, path or
 * parsed body used to reach a query and answer 500 (found by fuzzing: cas-api search, OpenRosa
 * answers). No field of either service may contain one, so it is refused once, here, with 400.
 * Bodies read as streams (XML, multipart) are checked by their parsers.
 */
@Injectable()
export class NulCharacterGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<RequestLike>();
    if (/%00/i.test(req.originalUrl ?? req.url ?? '') || containsNul(req.query) || containsNul(req.params) || containsNul(req.body)) {
      throw new BadRequestException({ detail: NUL_DETAIL });
    }
    return true;
  }
}

/** Iterative (deeply nested bodies must not overflow the stack), keys and values alike. */
export function containsNul(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return true;
    } else if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
    } else if (v && typeof v === 'object' && !Buffer.isBuffer(v)) {
      for (const [k, item] of Object.entries(v)) {
        if (k.includes('\u0000')) return true;
        stack.push(item);
      }
    }
  }
  return false;
}
