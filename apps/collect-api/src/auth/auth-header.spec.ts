import { BasicStrategy as HttpBasicStrategy } from 'passport-http';
import { Strategy as HttpBearerStrategy } from 'passport-http-bearer';
import { basicUserid, bearerToken, decodeBasic, parseAuthorization } from './auth-header.js';

describe('parseAuthorization', () => {
  it('is none without a header or with a scheme we do not know', () => {
    expect(parseAuthorization(undefined)).toEqual({ kind: 'none' });
    expect(parseAuthorization('')).toEqual({ kind: 'none' });
    expect(parseAuthorization('Digest abc')).toEqual({ kind: 'none' });
  });

  it('splits scheme (any case) and credentials', () => {
    expect(parseAuthorization('Token abc')).toEqual({ kind: 'credentials', scheme: 'token', credentials: 'abc' });
    expect(parseAuthorization('TEMPTOKEN abc')).toEqual({ kind: 'credentials', scheme: 'temptoken', credentials: 'abc' });
    expect(parseAuthorization('bearer x.y.z')).toEqual({ kind: 'credentials', scheme: 'bearer', credentials: 'x.y.z' });
    expect(parseAuthorization('Basic YTpi')).toEqual({ kind: 'credentials', scheme: 'basic', credentials: 'YTpi' });
  });

  it('is malformed with no credentials or with spaces in them', () => {
    expect(parseAuthorization('Token')).toEqual({ kind: 'malformed', scheme: 'token', detail: 'Invalid token header. No credentials provided.' });
    expect(parseAuthorization('Token a b')).toEqual({ kind: 'malformed', scheme: 'token', detail: 'Invalid token header. Token string should not contain spaces.' });
    expect(parseAuthorization('Basic')).toMatchObject({ kind: 'malformed', detail: 'Invalid basic header. No credentials provided.' });
  });
});

describe('decodeBasic', () => {
  it('decodes user:pass, keeping colons in the password', () => {
    expect(decodeBasic(Buffer.from('alice:pa:ss').toString('base64'))).toEqual({ username: 'alice', password: 'pa:ss' });
    expect(decodeBasic(Buffer.from('ünï:cödé').toString('base64'))).toEqual({ username: 'ünï', password: 'cödé' });
  });

  it('is null for text that is not base64 or has no colon', () => {
    expect(decodeBasic('!!!')).toBeNull();
    expect(decodeBasic(Buffer.from('alice').toString('base64'))).toBeNull();
  });
});

/**
 * The ports must refuse and accept exactly what the packages do before their verify callback:
 * each header (and body/query) is run through the package's own `authenticate` too.
 */
describe('basicUserid and bearerToken against passport-http and passport-http-bearer', () => {
  type Outcome = string | 400 | 401;
  function run(strategy: object, req: object): Outcome {
    let outcome: Outcome | undefined;
    const s = Object.assign(Object.create(strategy), {
      success: (user: { id: string }) => (outcome = user.id),
      fail: (challenge: unknown) => (outcome = challenge === 400 ? 400 : 401),
      error: (err: unknown) => {
        throw err;
      },
    });
    s.authenticate(req);
    return outcome!;
  }
  const basic = new HttpBasicStrategy({ passReqToCallback: true, realm: 'api' }, (_req: unknown, userid: string, _pw: string, done: (e: null, u: object) => void) => done(null, { id: userid }));
  const bearer = new HttpBearerStrategy((token: string, done: (e: null, u: object) => void) => done(null, { id: token }));
  const b64 = (pair: string) => Buffer.from(pair).toString('base64');

  it('Basic', () => {
    const headers = ['alice:pw', 'alice', 'alice:', ':pw', 'alice::pw', 'a:b:c', 'é:ü', '\u0000:x'].map((p) => `Basic ${b64(p)}`);
    headers.push(`Basic\t${b64('a:b')}`, `Basic  ${b64('a:b')}`, `Basic \t${b64('a:b')}`, `basic\u00a0 ${b64('a:b')}`, 'Basic !!!', 'Basic', 'Basic YTpi YTpi');
    for (const authorization of headers) expect([authorization, basicUserid(authorization)]).toEqual([authorization, run(basic, { headers: { authorization } })]);
  });

  it('Bearer', () => {
    const cases: object[] = [
      { headers: { authorization: 'Bearer abc' } },
      { headers: { authorization: 'bearer abc' } },
      { headers: { authorization: 'Bearer abc' }, query: { access_token: 'abc' } },
      { headers: { authorization: 'Bearer abc' }, body: { access_token: 'abc' } },
      { headers: { authorization: 'Bearer abc' }, body: 'access_token=abc', query: {} },
      { headers: { authorization: 'Bearer\tabc' } },
      { headers: { authorization: 'Bearer  abc' } },
      { headers: { authorization: 'Bearer \tabc' } },
      { headers: { authorization: 'Bearer\t abc' } },
      { headers: { authorization: 'Bearer abc' }, body: null, query: { access_token: '' } },
    ];
    for (const req of cases) expect([req, bearerToken(req as never)]).toEqual([req, run(bearer, req)]);
  });

  // The one departure: beside a header whose first word is not exactly `Bearer` the package
  // takes a token from the query or body; a token in a URL is never used here.
  it('Bearer: no token from the query or body beside a malformed Bearer header', () => {
    for (const req of [
      { headers: { authorization: 'Bearer\t abc' }, query: { access_token: 'q' } },
      { headers: { authorization: 'Bearer\tx y' }, body: { access_token: 'q' } },
    ]) {
      expect(run(bearer, req)).toBe('q');
      expect(bearerToken(req as never)).toBe(400);
    }
  });
});
