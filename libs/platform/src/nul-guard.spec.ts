import { BadRequestException, type ExecutionContext } from '@nestjs/common';
import { markNulFreeJson, NulCharacterGuard } from './nul-guard.js';

/** The guard on a JSON request as the body parser leaves it: `verify` saw the raw bytes, `body` is their parse. */
function guarded(raw: string, encoding = 'utf-8', body: unknown = JSON.parse(raw)): boolean {
  const req = { url: '/x', query: {}, params: {}, body };
  markNulFreeJson(req, {}, Buffer.from(raw, encoding === 'utf-16le' ? 'utf16le' : 'utf8'), encoding);
  const context = { getType: () => 'http', switchToHttp: () => ({ getRequest: () => req }) } as unknown as ExecutionContext;
  try {
    return new NulCharacterGuard().canActivate(context);
  } catch (err) {
    if (err instanceof BadRequestException) return false;
    throw err;
  }
}

describe('NulCharacterGuard on JSON bodies', () => {
  it('lets a body without the \\u0000 escape through without walking it', () => {
    expect(guarded('{"a":{"b":["c",1,null]},"d":"e"}')).toBe(true);
  });

  it('refuses a NUL written as the escape, in a value or a key, at any depth', () => {
    expect(guarded('{"a":"x\\u0000y"}')).toBe(false);
    expect(guarded('{"a":{"k\\u0000":1}}')).toBe(false);
    expect(guarded('[[[["\\u0000"]]]]')).toBe(false);
  });

  it('walks a body whose bytes hold the escape but whose values hold no NUL (an escaped backslash)', () => {
    expect(guarded('{"a":"\\\\u0000"}')).toBe(true);
  });

  it('walks a body in another charset (the bytes of the escape differ there)', () => {
    expect(guarded('{"a":"x\\u0000"}', 'utf-16le')).toBe(false);
    // Not marked: a body the marker did not vouch for is walked even when its bytes look clean.
    expect(guarded('{"a":"clean"}', 'utf-16le', { a: 'x\u0000' })).toBe(false);
  });
});
