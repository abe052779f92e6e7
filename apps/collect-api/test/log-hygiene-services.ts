import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, freshRedisPrefix, freshTestDatabase, sharedRedisUrl, startServiceProcess, type SecretLedger, type ServiceProcess } from '@collect/testing';
import { Receiver } from './restservices-receiver.js';
import { FakeSheetsProvider } from './restservices-sheets.js';

/* The services and page helpers of hardening-log-hygiene.e2e.ts. */

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const WORKER = fileURLToPath(new URL('../dist/worker.js', import.meta.url));
const CAS_MAIN = fileURLToPath(new URL('../../cas/dist/main.js', import.meta.url));
const CAS_DEV_SEED = fileURLToPath(new URL('../../cas/seed/dev-seed.json', import.meta.url));
export const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
/** The value a response's Set-Cookie gives `name`. */
export function cookieValue(res: Response, name: string): string {
  const line = res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
  if (!line) throw new Error(`no ${name} cookie set`);
  return line.slice(name.length + 1).split(';')[0];
}
export const unescapeHtml = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

/** A cookie jar over fetch, enough for the /o/ login and consent pages. */
export class Browser {
  private readonly jar = new Map<string, string>();
  constructor(private readonly base: string) {}
  async go(path: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(new URL(path, this.base), { ...init, redirect: 'manual', headers: { ...(init.headers as Record<string, string>), cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair.indexOf('=');
      this.jar.set(pair.slice(0, i), pair.slice(i + 1));
    }
    return res;
  }
  post(path: string, fields: Record<string, string>): Promise<Response> {
    return this.go(path, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
  }
}

export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) out[m[1]] = unescapeHtml(m[2]);
  return out;
}

/** What the log-hygiene test runs against: the API, its worker and a CAS, at LOG_LEVEL=trace, with secrets known to `secrets`. */
export interface LogHygieneServices { api: ServiceProcess; worker: ServiceProcess; cas: ServiceProcess; receiver: Receiver; sheets: FakeSheetsProvider; seedDir: string; databaseUrl: string }

/** Starts them; every secret they are configured with is kept in `secrets`. */
export async function startLogHygieneServices(secrets: SecretLedger): Promise<LogHygieneServices> {
  const keep = (name: string, value: unknown) => secrets.keep(name, value);
  const databaseUrl = await freshTestDatabase('collect_logs');
    const port = await freePort();
    const casPort = await freePort();
    const collectUrl = `http://127.0.0.1:${port}`;
    const issuer = `http://127.0.0.1:${casPort}`;
    const receiver = await new Receiver().start();
    const sheets = await new FakeSheetsProvider('logs-sheets-client', keep('SHEETS_CLIENT_SECRET', 'Sh33ts-client-secret-for-logs')).start();
    // The CAS: the dev seed (resources, demo clients) plus this test's clients with known secrets.
    const seedDir = mkdtempSync(join(tmpdir(), 'collect-logs-cas-'));
    writeFileSync(join(seedDir, 'seed.json'), JSON.stringify({
      clients: [
        { client_id: 'logs-web', client_secret: keep('CAS_CLIENT_SECRET', 'C4s-web-client-secret-for-logs'), grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
          scopes: ['openid', 'profile', 'email', 'offline_access', 'read', 'write'], resources: ['collect-api'], redirect_uris: [`${collectUrl}/auth/callback`], post_logout_redirect_uris: [`${collectUrl}/`],
          token_endpoint_auth_method: 'client_secret_basic' },
        { client_id: 'logs-onboarding', client_secret: keep('CAS_ONBOARDING_CLIENT_SECRET', 'C4s-onboarding-secret-for-logs'), grant_types: ['client_credentials'], response_types: [],
          scopes: ['adminui-api-wrapper', 'adminui-api-wrapper.users.search'], resources: ['cas-api'], redirect_uris: [], post_logout_redirect_uris: [], token_endpoint_auth_method: 'client_secret_basic' },
        { client_id: 'logs-machine', client_secret: 'M4chine-secret-for-collect-logs', grant_types: ['client_credentials'], response_types: [], scopes: ['read', 'write'], resources: ['collect-api'],
          redirect_uris: [], post_logout_redirect_uris: [], token_endpoint_auth_method: 'client_secret_basic' },
      ],
      users: [{ username: 'logcas', password: 'C4s-user-pa55word-for-collect-logs', email: 'logcas@example.org', given_name: 'Log', family_name: 'Cas', enabled: true }],
    }));
    const cas = await startServiceProcess(CAS_MAIN, {
      NODE_ENV: 'test',
      LOG_LEVEL: 'trace',
      CAS_PORT: String(casPort),
      CAS_HOST: '127.0.0.1',
      CAS_ISSUER: issuer,
      CAS_DATABASE_URL: await freshTestDatabase('cas_collect_logs'),
      CAS_DEV_SEED_FILE: CAS_DEV_SEED,
      CAS_SEED_FILE: join(seedDir, 'seed.json'),
    }, casPort);
    const collectEnv = {
      NODE_ENV: 'test',
      LOG_LEVEL: 'trace',
      COLLECT_PORT: String(port),
      COLLECT_HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      REDIS_URL: sharedRedisUrl(),
      REDIS_PREFIX: freshRedisPrefix('logs'),
      COLLECT_ADMIN_USERNAME: 'logadmin',
      COLLECT_ADMIN_PASSWORD: keep('admin password', 'Adm1n-pa55word-for-logs'),
      COLLECT_SECRET_KEY: keep('secret key', 'collect-secret-key-for-the-log-hygiene-test'),
      PUBLIC_BASE_URL: collectUrl,
      // Rest services: fast retries, loopback receivers allowed (delivered by the worker process).
      FORWARD_ALLOW_PRIVATE_NETWORKS: '127.0.0.0/8,::1/128',
      FORWARD_RELAY_INTERVAL_MS: '50',
      FORWARD_BACKOFF_BASE_MS: '50',
      FORWARD_BACKOFF_FACTOR: '2',
      FORWARD_MAX_ATTEMPTS: '2',
      FORWARD_TIMEOUT_MS: '2000',
      SHEETS_API_BASE_URL: sheets.url,
      SHEETS_OAUTH_AUTHORIZE_URL: `${sheets.url}/o/oauth2/auth`,
      SHEETS_OAUTH_TOKEN_URL: `${sheets.url}/token`,
      SHEETS_CLIENT_ID: sheets.clientId,
      SHEETS_CLIENT_SECRET: sheets.clientSecret,
      CAS_ISSUER: issuer,
      CAS_SIGN_IN_ENABLED: 'true',
      CAS_CLIENT_ID: 'logs-web',
      CAS_CLIENT_SECRET: secrets.get('CAS_CLIENT_SECRET'),
      CAS_ONBOARDING_CLIENT_ID: 'logs-onboarding',
      CAS_ONBOARDING_CLIENT_SECRET: secrets.get('CAS_ONBOARDING_CLIENT_SECRET'),
      ENCRYPTION_KEK: keep('ENCRYPTION_KEK', randomBytes(32).toString('base64')),
    };
    const api = await startServiceProcess(MAIN, collectEnv, port);
    const workerPort = await freePort();
    const worker = await startServiceProcess(WORKER, { ...collectEnv, WORKER_PORT: String(workerPort) }, workerPort);
  return { api, worker, cas, receiver, sheets, seedDir, databaseUrl };
}
