// Verifications per second of a CAS access token through @collect/jwt-validation (keys cached
// after discovery + JWKS from a real local HTTP server) against raw node:crypto.verify of the
// same RS256 signatures, measured in the same run. Goal: ratio >= 0.8.
// Also prints jose's jwtVerify with a local key for reference (it verifies through WebCrypto).
import { createPublicKey, verify } from 'node:crypto';
import { jwtVerify, importJWK } from 'jose';
import { JwtValidator } from '../libs/jwt-validation/dist/index.js';
import { LocalIssuer } from '../libs/jwt-validation/dist/testing/local-issuer.js';
import { median } from './bench-helpers.mjs';

const ROUNDS = 7; // short interleaved rounds, median: the machine is shared, load comes and goes
const ROUND_MS = Number(process.env.BENCH_ROUND_MS ?? 600);

const issuer = await LocalIssuer.start();
const tokens = Array.from({ length: 200 }, (_, i) => issuer.sign({ sub: `client-${i}`, scope: 'adminui-api-wrapper adminui-api-wrapper.users.search' }));
const validator = new JwtValidator({ issuer: issuer.issuer, audience: 'cas-api' });
await validator.verify(tokens[0]); // discovery + JWKS once, as in a running service

const nodeKey = createPublicKey({ key: issuer.keys[0].publicJwk, format: 'jwk' });
const raw = tokens.map((t) => {
  const [h, p, s] = t.split('.');
  return { data: Buffer.from(`${h}.${p}`), sig: Buffer.from(s, 'base64url') };
});
const joseKey = await importJWK(issuer.keys[0].publicJwk, 'RS256');

async function measure(fn) {
  let n = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(ROUND_MS) * 1_000_000n;
  while (process.hrtime.bigint() < end) {
    for (let i = 0; i < 50; i++) await fn(n++ % tokens.length);
  }
  return n / (Number(process.hrtime.bigint() - start) / 1e9);
}

const cases = {
  'crypto.verify (baseline)': (i) => {
    if (!verify('sha256', raw[i].data, nodeKey, raw[i].sig)) throw new Error('baseline failed');
  },
  '@collect/jwt-validation verify': (i) => validator.verify(tokens[i]),
  'jose jwtVerify (local key)': (i) => jwtVerify(tokens[i], joseKey, { issuer: issuer.issuer, audience: 'cas-api', algorithms: ['RS256'] }),
};
const results = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, fn] of Object.entries(cases)) results[name].push(await measure(fn));
}
const rate = Object.fromEntries(Object.entries(results).map(([k, v]) => [k, median(v)]));
for (const [name, perSec] of Object.entries(rate)) console.log(`${name}: ${Math.round(perSec)} verifications/s (median of ${ROUNDS})`);
const stats = validator.getStats();
console.log(`key fetches during the run: discovery ${stats.discoveryFetches}, jwks ${stats.jwksFetches}`);
const base = rate['crypto.verify (baseline)'];
console.log(`ratio library/crypto.verify: ${(rate['@collect/jwt-validation verify'] / base).toFixed(2)} (goal >= 0.8)`);
console.log(`ratio jose-jwtVerify/crypto.verify: ${(rate['jose jwtVerify (local key)'] / base).toFixed(2)} (reference)`);
await issuer.close();
