import { BadRequestException, type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';

type RequestLike = { originalUrl?: string; url?: string; query?: unknown; body?: unknown; params?: unknown; [NUL_FREE_BODY]?: true };

/** On a request whose JSON body markNulFreeJson found free of NUL. */
const NUL_FREE_BODY = Symbol('nulFreeBody');

/**
 * The JSON body parser's `verify` (http-app.ts): a UTF-8 body without the escape `\u0000` parses
 * to keys and values without a NUL (JSON writes U+0000 in a string only as that escape; raw
 * control characters are a syntax error), so the guard need not walk the parsed body. One
 * `indexOf` over the bytes instead of a visit of every key and value: the walk was about 1.5 %
 * of the API's time under a 250-answer load (docs/architecture.md, "The request
 * pipeline"). A body with the escape (a NUL, or an escaped backslash before `u0000`) and
 * any other charset are walked as before.
 */
export function markNulFreeJson(req: object, _res: unknown, buf: Buffer, encoding: string): void {
  if (encoding === 'utf-8' && buf.indexOf('\\u0000') === -1) (req as RequestLike)[NUL_FREE_BODY] = true;
}

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
    if (/%00/i.test(req.originalUrl ?? req.url ?? '') || containsNul(req.query) || containsNul(req.params) || (!req[NUL_FREE_BODY] && containsNul(req.body))) {
      throw new BadRequestException({ detail: NUL_DETAIL });
    }
    return true;
  }
}

/**
 * Iterative (deeply nested bodies must not overflow the stack), keys and values alike. Strings
 * are checked where they are met and objects walked by their keys: `Object.entries` (an array
 * per property) was a twentieth of all a 250-answer JSON submission allocated
 * and `Object.keys` per object still 3.9 KB (docs/architecture.md, "The request pipeline").
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
