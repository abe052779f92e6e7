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

/**
 * Iterative (deeply nested bodies must not overflow the stack), keys and values alike. Strings
 * are checked where they are met and objects walked by their keys: `Object.entries` (an array
 * per property) was a twentieth of all a 250-answer JSON submission allocated
 * (docs/benchmarks.md, "Soak (issue 20, session 7)"), `Object.keys` per object still 3.9 KB
 * ("Request pipeline and V8 options (issue 20, session 10)").
 */
export function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (const item of v) {
        if (typeof item === 'string') {
          if (item.includes('\u0000')) return true;
        } else if (item !== null && typeof item === 'object') stack.push(item);
      }
    } else if (v && typeof v === 'object' && !Buffer.isBuffer(v)) {
      const object = v as Record<string, unknown>;
      // for-in reads the object's key cache in place; Object.keys copies it into a new array per
      // object (with the numbers pushed, 3.9 KB of a 250-answer submission's garbage; now 0.9). Parsed bodies are plain objects
      // (JSON.parse, querystring): nothing enumerable is inherited; anything that were would be checked too.
      for (const k in object) {
        if (k.includes('\u0000')) return true;
        const item = object[k];
        // Only objects and lists wait on the stack: numbers, booleans and null hold no NUL.
        if (typeof item === 'string') {
          if (item.includes('\u0000')) return true;
        } else if (item !== null && typeof item === 'object') stack.push(item);
      }
    }
  }
  return false;
}
