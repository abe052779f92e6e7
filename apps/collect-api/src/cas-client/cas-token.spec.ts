import { isCasIssuedJwt, isClientCredentialsToken } from './cas-token.js';
import { safeReturnTo } from './cas-sign-in.service.js';

const ISSUER = 'https://auth.example.org';
const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const jwt = (payload: unknown) => `${part({ alg: 'RS256', kid: 'k' })}.${part(payload)}.c2ln`;

describe('telling CAS tokens from local ones', () => {
  it('routes a three-part JWT whose iss is the CAS issuer', () => {
    expect(isCasIssuedJwt(jwt({ iss: ISSUER }), ISSUER)).toBe(true);
  });

  it.each([
    ['a local opaque token', 'a'.repeat(43)],
    ['another issuer', jwt({ iss: 'https://other.example' })],
    ['an issuer differing by a trailing slash', jwt({ iss: `${ISSUER}/` })],
    ['two parts', jwt({ iss: ISSUER }).split('.').slice(0, 2).join('.')],
    ['a payload that is not JSON', `${part({})}.bm90IGpzb24.c2ln`],
    ['a JSON payload that is not an object', `${part({})}.${part('x')}.c2ln`],
    ['an empty payload', `${part({})}..c2ln`],
    ['four parts', `${jwt({ iss: ISSUER })}.x`],
  ])('leaves %s to the other resolvers', (_name, token) => {
    expect(isCasIssuedJwt(token, ISSUER)).toBe(false);
  });

  it('routes a JWT naming the CAS issuer even with stray characters: the validator refuses it there (401), not a local lookup', () => {
    expect(isCasIssuedJwt(`${part({})}.${part({ iss: ISSUER })}.c2l+`, ISSUER)).toBe(true);
  });

  it('calls a token client credentials only when sub is its own client_id', () => {
    expect(isClientCredentialsToken({ sub: 'demo-machine', client_id: 'demo-machine' })).toBe(true);
    expect(isClientCredentialsToken({ sub: '5a0c6c1e-1b1a-4c57-9d1e-1e7c7b0f0f00', client_id: 'collect-web' })).toBe(false);
    expect(isClientCredentialsToken({ sub: 'x' })).toBe(false);
  });
});

describe('safeReturnTo', () => {
  it.each([['/login', '/login'], ['/o/authorize?client_id=a&x=1', '/o/authorize?client_id=a&x=1'], ['https://evil.example/', '/login'], ['//evil.example', '/login'], ['/\\evil.example', '/login'], ['/a\r\nSet-Cookie: x', '/login'], [undefined, '/login'], [['/a'], '/login']])('%s → %s', (given, expected) => {
    expect(safeReturnTo(given)).toBe(expected);
  });
});
