import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { constants, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import type { JWK } from 'jose';

export interface IssuerKey {
  kid: string;
  privateKey: KeyObject;
  publicJwk: JWK;
}

/**
 * A real HTTP server publishing discovery + JWKS for tests and benchmarks of this library
 * (the CAS stands in for it in integration tests). Counts requests and can be taken down.
 */
export class LocalIssuer {
  readonly keys: IssuerKey[] = [];
  /** Answer 503 to everything while true (CAS briefly down). */
  down = false;
  discoveryRequests = 0;
  jwksRequests = 0;
  /** Extra JWKs published as they are (malformed or private keys, for negative tests). */
  extraJwks: unknown[] = [];
  private server?: Server;
  url = '';

  static async start(): Promise<LocalIssuer> {
    const issuer = new LocalIssuer();
    issuer.addKey('key-1');
    await issuer.listen();
    return issuer;
  }

  get issuer(): string {
    return this.url;
  }

  addKey(kid: string, modulusLength = 2048): IssuerKey {
    const key = generateSigningKey(kid, modulusLength);
    this.keys.push(key);
    return key;
  }

  removeKey(kid: string): void {
    const i = this.keys.findIndex((k) => k.kid === kid);
    if (i >= 0) this.keys.splice(i, 1);
  }

  /** Clock of the `iat`/`exp` defaults, in ms; tests that step their validator's clock step this one too. */
  now: () => number = Date.now;

  /**
   * Signs with the first key unless `kid`/`key` say otherwise. Default claims make a token the
   * validator accepts; a claim given as undefined is left out. Signs with node:crypto rather than
   * jose so tests can craft what jose refuses to produce (crit headers, RS384 with an RS256 key).
   */
  sign(claims: Record<string, unknown> = {}, opts: { kid?: string; key?: IssuerKey; alg?: string; header?: Record<string, unknown>; audience?: string } = {}): string {
    const key = opts.key ?? this.keys.find((k) => k.kid === (opts.kid ?? this.keys[0].kid));
    if (!key) throw new Error(`no key ${opts.kid}`);
    const now = Math.floor(this.now() / 1000);
    const payload: Record<string, unknown> = { iss: this.url, aud: opts.audience ?? 'cas-api', sub: 'client-1', client_id: 'client-1', scope: 'a b', iat: now, exp: now + 300, jti: randomUUID(), ...claims };
    for (const [k, v] of Object.entries(payload)) if (v === undefined) delete payload[k];
    const header = { alg: opts.alg ?? 'RS256', kid: opts.kid ?? key.kid, typ: 'at+jwt', ...opts.header };
    return signCompact(header, payload, key.privateKey);
  }

  private async listen(): Promise<void> {
    this.server = createServer((req, res) => {
      if (this.down) {
        res.writeHead(503).end();
        return;
      }
      if (req.url === '/.well-known/openid-configuration') {
        this.discoveryRequests++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: this.url, jwks_uri: `${this.url}/jwks`, token_endpoint: `${this.url}/token` }));
      } else if (req.url === '/jwks') {
        this.jwksRequests++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [...this.extraJwks, ...this.keys.map((k) => k.publicJwk)] }));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}

/** An RSA key pair with its public JWK as a JWKS publishes it. */
export function generateSigningKey(kid: string, modulusLength = 2048, alg = 'RS256'): IssuerKey {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength });
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg };
  return { kid, privateKey, publicJwk };
}

/** Compact JWS over `header` and `payload` with an RSA private key (RS* and PS* algorithms). */
export function signCompact(header: Record<string, unknown>, payload: Record<string, unknown>, privateKey: KeyObject): string {
  const input = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  const alg = String(header.alg);
  const hash = `sha${alg.slice(2)}`;
  const key = alg.startsWith('PS') ? { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 } : privateKey;
  return `${input}.${sign(hash, Buffer.from(input), key).toString('base64url')}`;
}
