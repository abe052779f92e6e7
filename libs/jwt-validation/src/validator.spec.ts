import { createHmac, createPublicKey } from 'node:crypto';
import { generateKeyPair, SignJWT } from 'jose';
import { JwtValidationError, KeySourceUnavailableError, type JwtErrorCode } from './errors.js';
import { LocalIssuer, generateSigningKey } from './testing/local-issuer.js';
import { JwtValidator } from './validator.js';
import type { JwtValidatorOptions } from './options.js';

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const nowSec = () => Math.floor(Date.now() / 1000);

/** A stepping clock so cooldowns can be crossed without waiting (tests never sleep). */
function steppingClock() {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms: number) => (offset += ms) };
}

describe('JwtValidator', () => {
  let issuer: LocalIssuer;
  const validators: JwtValidator[] = [];
  const make = (extra: Partial<JwtValidatorOptions> = {}) => {
    const v = new JwtValidator({ issuer: issuer.issuer, audience: 'cas-api', ...extra });
    validators.push(v);
    return v;
  };

  async function expectRefused(v: JwtValidator, token: string, code: JwtErrorCode, message?: RegExp) {
    const err = await v.verify(token).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(JwtValidationError);
    expect((err as JwtValidationError).code).toBe(code);
    if (message) expect((err as JwtValidationError).message).toMatch(message);
  }

  beforeEach(async () => {
    issuer = await LocalIssuer.start();
  });
  afterEach(async () => {
    await issuer.close();
  });

  it('accepts a valid RS256 token found through discovery and returns its claims and scopes', async () => {
    const v = make();
    const result = await v.verify(await issuer.sign({ scope: 'adminui-api-wrapper adminui-api-wrapper.users.search', sub: 'demo-onboarding', client_id: 'demo-onboarding' }));
    expect(result.scopes).toEqual(['adminui-api-wrapper', 'adminui-api-wrapper.users.search']);
    expect(result.subject).toBe('demo-onboarding');
    expect(result.clientId).toBe('demo-onboarding');
    expect(result.header).toMatchObject({ alg: 'RS256', kid: 'key-1' });
    expect(result.claims.iss).toBe(issuer.issuer);
  });

  it('accepts an aud array that contains the audience', async () => {
    await expect(make().verify(await issuer.sign({ aud: ['other', 'cas-api'] }))).resolves.toBeDefined();
  });

  describe('alg', () => {
    it('refuses alg none (unsigned token)', async () => {
      const token = `${b64({ alg: 'none', kid: 'key-1' })}.${b64({ iss: issuer.issuer, aud: 'cas-api', exp: nowSec() + 60, iat: nowSec(), sub: 'x' })}.`;
      await expectRefused(make(), token, 'alg_not_allowed', /"none"/);
    });

    it('refuses HS256 signed with the public key as the HMAC secret', async () => {
      const v = make();
      await v.verify(await issuer.sign()); // keys cached: the attack targets a validator that has them
      const payload = b64({ iss: issuer.issuer, aud: 'cas-api', exp: nowSec() + 60, iat: nowSec(), sub: 'x' });
      for (const secret of [
        createPublicKey({ key: issuer.keys[0].publicJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }) as string,
        JSON.stringify(issuer.keys[0].publicJwk),
      ]) {
        const input = `${b64({ alg: 'HS256', kid: 'key-1', typ: 'JWT' })}.${payload}`;
        const token = `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
        await expectRefused(v, token, 'alg_not_allowed', /"HS256"/);
      }
    });

    it.each(['RS384', 'PS256'])('refuses %s even when signed by the published RSA key', async (alg) => {
      await expectRefused(make(), await issuer.sign({}, { alg }), 'alg_not_allowed', new RegExp(alg));
    });

    it('refuses ES256', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const token = await new SignJWT({ iss: issuer.issuer, aud: 'cas-api', sub: 'x' }).setProtectedHeader({ alg: 'ES256', kid: 'key-1' }).setIssuedAt().setExpirationTime('5m').sign(privateKey);
      await expectRefused(make(), token, 'alg_not_allowed', /ES256/);
    });

    it('accepts another RSA algorithm only when put on the allow-list, and only for a key not pinned to RS256', async () => {
      const ps = generateSigningKey('ps-key', 2048, 'PS256');
      issuer.keys.push(ps);
      const v = make({ algorithms: ['RS256', 'PS256'] });
      await expect(v.verify(await issuer.sign({}, { key: ps, alg: 'PS256' }))).resolves.toBeDefined();
      // key-1 is published with alg RS256: a PS256 token naming it is refused.
      await expectRefused(v, await issuer.sign({}, { alg: 'PS256' }), 'alg_not_allowed', /does not match its key/);
    });

    it('rejects an unknown algorithm in the configuration', () => {
      expect(() => make({ algorithms: ['HS256' as never] })).toThrow(/unsupported algorithm HS256/);
    });
  });

  describe('kid and signature', () => {
    it('refuses a token without kid', async () => {
      const token = await new SignJWT({ iss: issuer.issuer, aud: 'cas-api', sub: 'x' }).setProtectedHeader({ alg: 'RS256' }).setIssuedAt().setExpirationTime('5m').sign(issuer.keys[0].privateKey);
      await expectRefused(make(), token, 'kid_missing');
    });

    it('refuses a token signed by a key the issuer does not publish', async () => {
      const stranger = generateSigningKey('stranger');
      await expectRefused(make(), await issuer.sign({}, { key: stranger }), 'kid_unknown', /"stranger"/);
    });

    it('refuses a token whose kid is known but whose key is not the signer', async () => {
      const stranger = generateSigningKey('x');
      await expectRefused(make(), await issuer.sign({}, { key: stranger, kid: 'key-1' }), 'signature_invalid');
    });

    it('refuses a tampered payload and a tampered signature', async () => {
      const v = make();
      const token = await issuer.sign({ scope: 'a' });
      const [h, , s] = token.split('.');
      const forged = b64({ ...JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()), scope: 'a admin' });
      await expectRefused(v, `${h}.${forged}.${s}`, 'signature_invalid');
      const flipped = s.slice(0, 10) + (s[10] === 'A' ? 'B' : 'A') + s.slice(11);
      await expectRefused(v, `${h}.${token.split('.')[1]}.${flipped}`, 'signature_invalid');
      await expectRefused(v, `${h}.${token.split('.')[1]}.`, 'signature_invalid');
      // Characters base64url decoding would skip still change the signed bytes.
      const p = token.split('.')[1];
      for (const junk of ['!', ' ', '=', '+', '/', '\u00e9']) await expectRefused(v, `${h}.${p.slice(0, 5)}${junk}${p.slice(5)}.${s}`, 'signature_invalid');
      await expectRefused(v, `${h}.${p}=.${s}`, 'signature_invalid');
      await expectRefused(v, `${h}..${s}`, 'token_malformed');
      await expectRefused(v, `${h}!.${p}.${s}`, 'token_malformed');
    });

    it('binds the exact token string: no other spelling of the signed bytes is accepted', async () => {
      const v = make();
      const token = await issuer.sign({ sub: 'client-1' });
      await expect(v.verify(token)).resolves.toMatchObject({ subject: 'client-1' });
      const [h, p, s] = token.split('.');
      // A payload character moved up by 256 keeps its low byte: latin1 would sign it as the
      // original, and Node's base64url decoder reads it as the original too.
      const shifted = String.fromCharCode(p.charCodeAt(7) + 256);
      await expectRefused(v, `${h}.${p.slice(0, 7)}${shifted}${p.slice(8)}.${s}`, 'signature_invalid');
      // The signature in base64 (not url) spelling, with padding, or with a non-canonical last
      // character decodes to the same bytes; only its exact base64url form is accepted.
      const sig = Buffer.from(s, 'base64url');
      expect(sig.toString('base64')).toMatch(/[+/]/); // this key's signature has one of them (else re-sign)
      await expectRefused(v, `${h}.${p}.${sig.toString('base64').replace(/=+$/, '')}`, 'signature_invalid');
      await expectRefused(v, `${h}.${p}.${s}==`, 'signature_invalid');
      const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'.indexOf(s.at(-1)!);
      const nonCanonical = s.slice(0, -1) + 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[last | 1];
      expect(Buffer.from(nonCanonical, 'base64url').equals(sig)).toBe(true);
      if (nonCanonical !== s) await expectRefused(v, `${h}.${p}.${nonCanonical}`, 'signature_invalid');
    });

    it('refuses malformed tokens: garbage, two parts, JWE (five parts), non-JSON header', async () => {
      const v = make();
      await expectRefused(v, 'not-a-jwt', 'token_malformed');
      await expectRefused(v, 'a.b', 'token_malformed');
      await expectRefused(v, 'a.b.c.d.e', 'token_malformed');
      await expectRefused(v, `${b64('not json')}.${b64({})}.sig`, 'token_malformed', /header/);
      await expectRefused(v, `${b64('[1]')}.${b64({})}.sig`, 'token_malformed', /header/);
      await expectRefused(v, '', 'token_malformed');
    });

    it('refuses a token larger than the configured bound before any parsing', async () => {
      const v = make({ maxTokenLength: 2048 });
      await expectRefused(v, await issuer.sign({ pad: 'x'.repeat(3000) }), 'token_too_large');
      expect(issuer.jwksRequests).toBe(0);
    });

    it('refuses critical header parameters it does not understand', async () => {
      await expectRefused(make(), await issuer.sign({}, { header: { crit: ['exp'], exp: 1 } }), 'crit_unsupported');
    });

    it('checks typ when configured (RFC 9068 at+jwt)', async () => {
      const v = make({ typ: 'at+jwt' });
      await expect(v.verify(await issuer.sign())).resolves.toBeDefined();
      await expect(v.verify(await issuer.sign({}, { header: { typ: 'application/at+jwt' } }))).resolves.toBeDefined();
      await expectRefused(v, await issuer.sign({}, { header: { typ: 'JWT' } }), 'typ_not_allowed');
    });
  });

  describe('claims', () => {
    it('refuses a wrong issuer', async () => {
      await expectRefused(make(), await issuer.sign({ iss: 'https://evil.example' }), 'issuer_mismatch', /evil/);
    });

    it('refuses an issuer that differs only by a trailing slash', async () => {
      await expectRefused(make(), await issuer.sign({ iss: `${issuer.issuer}/` }), 'issuer_mismatch');
    });

    it('refuses a wrong audience, also in an array', async () => {
      const v = make();
      await expectRefused(v, await issuer.sign({ aud: 'collect-api' }), 'audience_mismatch', /cas-api/);
      await expectRefused(v, await issuer.sign({ aud: ['collect-api', 'other'] }), 'audience_mismatch');
    });

    it('refuses an expired token, but allows expiry within the clock skew', async () => {
      const v = make({ clockToleranceSeconds: 30 });
      await expectRefused(v, await issuer.sign({ exp: nowSec() - 31, iat: nowSec() - 600 }), 'token_expired');
      await expect(v.verify(await issuer.sign({ exp: nowSec() - 10, iat: nowSec() - 600 }))).resolves.toBeDefined();
      await expectRefused(make({ clockToleranceSeconds: 0 }), await issuer.sign({ exp: nowSec() - 10, iat: nowSec() - 600 }), 'token_expired');
    });

    it('refuses a token not yet valid (nbf) and one issued in the future (iat), beyond the skew', async () => {
      const v = make({ clockToleranceSeconds: 30 });
      await expectRefused(v, await issuer.sign({ nbf: nowSec() + 120 }), 'token_not_yet_valid');
      await expectRefused(v, await issuer.sign({ iat: nowSec() + 120 }), 'token_issued_in_future');
      await expect(v.verify(await issuer.sign({ nbf: nowSec() + 10, iat: nowSec() + 10 }))).resolves.toBeDefined();
    });

    it.each(['iss', 'aud', 'exp', 'iat', 'sub'])('refuses a token without %s', async (claim) => {
      await expectRefused(make(), await issuer.sign({ [claim]: undefined }), 'claim_missing', new RegExp(`"${claim}"`));
    });

    it('lets the required claims be configured (sub not needed)', async () => {
      await expect(make({ requiredClaims: ['iat'] }).verify(await issuer.sign({ sub: undefined }))).resolves.toBeDefined();
    });

    it('refuses claims of the wrong type', async () => {
      const v = make();
      await expectRefused(v, await issuer.sign({ exp: String(nowSec() + 60) as never }), 'claim_invalid', /"exp"/);
      await expectRefused(v, await issuer.sign({ scope: ['a'] as never }), 'claim_invalid', /"scope"/);
      await expectRefused(v, await issuer.sign({ sub: 7 as never }), 'claim_invalid', /"sub"/);
    });
  });

  describe('key set cache', () => {
    it('reads discovery and the JWKS once for many tokens', async () => {
      const v = make();
      for (let i = 0; i < 20; i++) await v.verify(await issuer.sign());
      expect(issuer.discoveryRequests).toBe(1);
      expect(issuer.jwksRequests).toBe(1);
    });

    it('shares one fetch between concurrent first requests', async () => {
      const v = make();
      const token = await issuer.sign();
      await Promise.all(Array.from({ length: 10 }, () => v.verify(token)));
      expect(issuer.jwksRequests).toBe(1);
    });

    it('picks up a rotated key without restart (refetch on unknown kid after the cooldown)', async () => {
      const clock = steppingClock();
      const v = make({ now: clock.now, jwksCooldownMs: 30_000 });
      await v.verify(await issuer.sign());
      const next = issuer.addKey('key-2');
      clock.advance(31_000);
      await expect(v.verify(await issuer.sign({}, { key: next }))).resolves.toMatchObject({ header: { kid: 'key-2' } });
      expect(issuer.jwksRequests).toBe(2);
      // The previous key stays published during rotation, so its tokens still pass.
      await expect(v.verify(await issuer.sign({}, { kid: 'key-1' }))).resolves.toBeDefined();
    });

    it('turns a flood of unknown kids into at most one JWKS fetch per cooldown', async () => {
      const clock = steppingClock();
      const v = make({ now: clock.now, jwksCooldownMs: 30_000 });
      await v.verify(await issuer.sign());
      clock.advance(31_000);
      const stranger = generateSigningKey('s');
      const tokens = await Promise.all(Array.from({ length: 50 }, (_, i) => issuer.sign({}, { key: stranger, kid: `bogus-${i}` })));
      for (const t of tokens) await expectRefused(v, t, 'kid_unknown');
      expect(issuer.jwksRequests).toBe(2);
      clock.advance(10_000);
      for (const t of tokens.slice(0, 10)) await expectRefused(v, t, 'kid_unknown');
      expect(issuer.jwksRequests).toBe(2);
      clock.advance(21_000);
      await expectRefused(v, tokens[0], 'kid_unknown');
      expect(issuer.jwksRequests).toBe(3);
    });

    it('keeps accepting tokens with cached keys while the issuer is down, and refreshes when it is back', async () => {
      const clock = steppingClock();
      issuer.now = clock.now;
      const v = make({ now: clock.now, jwksMaxAgeMs: 60_000 });
      await v.verify(await issuer.sign());
      issuer.down = true;
      clock.advance(5 * 60_000); // keys are now old: a background refresh fails, cached keys still serve
      for (let i = 0; i < 5; i++) await expect(v.verify(await issuer.sign())).resolves.toBeDefined();
      await v.settled();
      expect(v.getStats().jwksFetchFailures).toBeGreaterThanOrEqual(1);
      issuer.down = false;
      const rotated = issuer.addKey('key-2');
      clock.advance(31_000);
      await expect(v.verify(await issuer.sign({}, { key: rotated }))).resolves.toBeDefined();
    });

    it('answers KeySourceUnavailableError (not a token error) when no keys were ever obtained, and recovers', async () => {
      const clock = steppingClock();
      const v = make({ now: clock.now, unavailableRetryMs: 1_000 });
      issuer.down = true;
      const token = await issuer.sign();
      await expect(v.verify(token)).rejects.toBeInstanceOf(KeySourceUnavailableError);
      await expect(v.verify(token)).rejects.toBeInstanceOf(KeySourceUnavailableError);
      expect(issuer.jwksRequests + issuer.discoveryRequests).toBe(0); // 503s are not counted; attempts are rate-limited below
      issuer.down = false;
      await expect(v.verify(token)).rejects.toBeInstanceOf(KeySourceUnavailableError); // still inside the retry interval
      clock.advance(1_001);
      await expect(v.verify(token)).resolves.toBeDefined();
    });

    it('refuses a discovery document that names another issuer', async () => {
      const v = make({ discoveryUrl: `${issuer.url}/.well-known/openid-configuration`, issuer: 'https://cas.example' });
      await expect(v.verify(await issuer.sign({ iss: 'https://cas.example' }))).rejects.toBeInstanceOf(KeySourceUnavailableError);
    });

    it('skips private, short, foreign and malformed entries of the key set', async () => {
      const priv = generateSigningKey('private-one');
      issuer.extraJwks = [
        { ...priv.privateKey.export({ format: 'jwk' }), kid: 'private-one' },
        { kty: 'EC', kid: 'ec', crv: 'P-256', x: 'x', y: 'y' },
        { kty: 'RSA', kid: 'broken', n: '!!', e: 'AQAB' },
        { ...generateSigningKey('enc').publicJwk, use: 'enc' },
        'garbage',
      ];
      const short = issuer.addKey('short', 1024);
      const v = make();
      await expect(v.verify(await issuer.sign())).resolves.toBeDefined();
      expect(v.getStats().keys).toEqual(['key-1']);
      await expectRefused(v, await issuer.sign({}, { key: priv }), 'kid_unknown');
      await expectRefused(v, await issuer.sign({}, { key: short }), 'kid_unknown');
    });

    it('can skip discovery with a configured jwksUri', async () => {
      const v = make({ jwksUri: `${issuer.url}/jwks` });
      await v.verify(await issuer.sign());
      expect(issuer.discoveryRequests).toBe(0);
    });
  });

  afterAll(() => validators.splice(0));
});
