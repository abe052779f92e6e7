import { decodeBasic, parseAuthorization } from './auth-header.js';

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
