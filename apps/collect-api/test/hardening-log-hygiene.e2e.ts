import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { rmSync } from 'node:fs';
import { SecretLedger, type ServiceProcess } from '@collect/testing';
import { FormLogin } from '../../cas/test/support/form-login.js';
import { demoXForm } from './forms-fixtures.js';
import { encryptSubmission } from './odk-encryptor.js';
import { Receiver, until } from './restservices-receiver.js';
import { FakeSheetsProvider } from './restservices-sheets.js';
import { Browser, basic, cookieValue, hiddenFields, startLogHygieneServices } from './log-hygiene-services.js';

/**
 * Drives the main flows of collect-api in a child process at LOG_LEVEL=trace with known secrets
 * (passwords, API and temporary tokens, OAuth client secret, authorization code, access and
 * refresh tokens; rest services' messaging `auth_token` and signing secret, delivered to a local
 * receiver that fails some attempts; the sheet provider's client secret and code; the CAS client
 * secrets, a CAS access token used as Bearer, the CAS sign-in code, state, cookies and ID token)
 * and asserts that none of them appears in any line it logged. A real CAS (child process, also
 * at trace) serves the CAS flows; its lines are checked for these secrets too.
 */
describe('hardening: log hygiene (collect-api)', () => {
  let proc: ServiceProcess;
  let worker: ServiceProcess;
  let collectDatabaseUrl = '';
  let cas: ServiceProcess;
  let receiver: Receiver;
  let sheets: FakeSheetsProvider;
  let seedDir: string;
  const secrets = new SecretLedger();
  const keep = (name: string, value: unknown) => secrets.keep(name, value);

  beforeAll(async () => {
    ({ api: proc, worker, cas, receiver, sheets, seedDir, databaseUrl: collectDatabaseUrl } = await startLogHygieneServices(secrets));
  });
  afterAll(async () => {
    await proc?.stop();
    await worker?.stop();
    await cas?.stop();
    await receiver?.close();
    await sheets?.close();
    if (seedDir) rmSync(seedDir, { recursive: true, force: true });
  });

  it('never logs a password, token, client secret, code or session cookie', async () => {
    const url = proc.url;
    const json = (path: string, auth: string | null, body?: unknown, method = body === undefined ? 'GET' : 'POST') =>
      fetch(`${url}${path}`, { method, headers: { ...(auth ? { Authorization: auth } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });

    const password = keep('user password', 'Us3r-pa55word-for-logs');
    expect((await json('/api/v1/profiles', null, { username: 'loguser', password, email: 'log@example.org' })).status).toBe(201);
    const me = (await (await json('/api/v1/user', basic('loguser', password))).json()) as { api_token: string; temp_token: string };
    keep('api token', me.api_token);
    keep('temp token', me.temp_token);
    expect((await json('/api/v1/user', `TempToken ${me.temp_token}`)).status).toBe(200);
    expect((await json('/api/v1/user', basic('loguser', keep('wrong password', 'Wr0ng-pa55word-for-logs')))).status).toBe(401);
    expect((await json('/api/v1/user', basic('logadmin', secrets.get('admin password')))).status).toBe(200);
    const fresh = (await (await json('/api/v1/user/regenerate_auth_token', `Token ${me.api_token}`)).json()) as string;
    const token = `Token ${keep('regenerated api token', fresh)}`;
    expect((await json(`/api/v1/user?token=${me.api_token}&access_token=${fresh}`, token)).status).toBe(200);

    const formRes = await fetch(`${url}/api/v1/forms`, { method: 'POST', headers: { Authorization: token, 'content-type': 'application/xml' }, body: demoXForm('logs') });
    expect(formRes.status).toBe(201);
    expect((await json('/api/v1/submissions', token, { id: 'logs', submission: { name: 'x' } })).status).toBe(201);
    // Encryption on a form of its own: a plaintext submission to an encrypted form is refused, and later steps submit to `logs`.
    const encRes = await fetch(`${url}/api/v1/forms`, { method: 'POST', headers: { Authorization: token, 'content-type': 'application/xml' }, body: demoXForm('logs_enc') });
    expect(encRes.status).toBe(201);
    await encryptionKeys(token, ((await encRes.json()) as { formid: number }).formid);

    const app = (await (await json('/api/v1/oauth-applications', token, { name: 'logs', client_type: 'confidential', redirect_uris: 'https://client.example/cb' })).json()) as { client_id: string; client_secret: string };
    keep('client secret', app.client_secret);
    const browser = new Browser(url);
    const authorizePath = `/o/authorize?client_id=${app.client_id}&response_type=code&state=st&scope=read+write`;
    const login = hiddenFields(await (await browser.go(authorizePath)).text());
    expect((await browser.post('/o/login', { ...login, username: 'loguser', password })).status).toBe(303);
    const consent = hiddenFields(await (await browser.go(authorizePath)).text());
    const decided = await browser.post('/o/authorize', { ...consent, decision: 'allow' });
    const code = keep('authorization code', new URL(decided.headers.get('location')!).searchParams.get('code'));
    const exchange = (fields: Record<string, string>) =>
      fetch(`${url}/o/token`, { method: 'POST', headers: { Authorization: basic(app.client_id, app.client_secret), 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    const tokens = (await (await exchange({ grant_type: 'authorization_code', code })).json()) as { access_token: string; refresh_token: string };
    keep('access token', tokens.access_token);
    keep('refresh token', tokens.refresh_token);
    expect((await json('/api/v1/user', `Bearer ${tokens.access_token}`)).status).toBe(200);
    const refreshed = (await (await exchange({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).json()) as { access_token: string; refresh_token: string };
    keep('refreshed access token', refreshed.access_token);
    keep('rotated refresh token', refreshed.refresh_token);
    // Reuse of the consumed refresh token and of the code: refusals are logged too.
    expect((await exchange({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })).status).toBe(400);
    expect((await exchange({ grant_type: 'authorization_code', code })).status).toBe(400);

    await restServices(token);
    await sheetsGrant(token);
    await personalTokens(token);
    await casFlows();

    await proc.stop();
    await worker.stop();
    await cas.stop();
    const lines = [...proc.output().split('\n'), ...worker.output().split('\n')].filter(Boolean);
    const casLines = cas.output().split('\n').filter(Boolean);
    // The capture works: requests, the failed login, failed deliveries and the CAS sign-in were logged.
    expect(lines.length).toBeGreaterThan(20);
    expect(lines.some((l) => l.includes('/o/token'))).toBe(true);
    expect(lines.some((l) => l.includes('failed login'))).toBe(true);
    expect(lines.some((l) => l.includes('delivery failed'))).toBe(true);
    expect(lines.some((l) => l.includes('/api/v1/restservices/sheets/callback'))).toBe(true);
    expect(lines.some((l) => l.includes('cas_sign_in.success'))).toBe(true);
    expect(lines.some((l) => l.includes('cas_user.onboarded'))).toBe(true);
    // Personal tokens: none appears, not even its `cpat_` beginning (docs/auth.md, "Personal access tokens").
    expect(lines.some((l) => l.includes('/api/v1/api-tokens'))).toBe(true);
    expect(lines.filter((l) => l.includes('cpat_'))).toEqual([]);
    // The CAS logs the tokens it issued (client credentials for the machine and on-boarding clients, the sign-in's access token).
    expect(casLines.filter((l) => l.includes('token.issued')).length).toBeGreaterThanOrEqual(3);
    const leaks = [...secrets.leaks(lines, 'collect-api'), ...secrets.leaks(casLines, 'cas')];
    expect(leaks).toEqual([]);
    console.log(`log hygiene (collect-api): ${secrets.size} secrets, ${lines.length} log lines (+${casLines.length} of the CAS), no leak`);
  });

  const url = () => proc.url;

  /** Personal access tokens: created, used as Token and Bearer (also in a query string by mistake), unknown, revoked. */
  async function personalTokens(token: string): Promise<void> {
    const created = (await (await call('/api/v1/api-tokens', token, { name: 'logs phone', scopes: ['submit', 'read'] })).json()) as { id: number; token: string };
    const pat = keep('personal access token', created.token);
    expect(pat).toMatch(/^cpat_/);
    for (const scheme of ['Token', 'Bearer']) {
      expect((await call('/api/v1/user', `${scheme} ${pat}`)).status).toBe(200);
      expect((await call('/formList', `${scheme} ${pat}`)).status).toBe(200);
      expect((await call('/api/v1/submissions', `${scheme} ${pat}`, { id: 'logs', submission: { name: 'p' } })).status).toBe(201);
    }
    expect((await call(`/api/v1/user?token=${pat}`, `Token ${pat}`)).status).toBe(200);
    // Refusals are logged too: a scope too small, a personal token creating one, an unknown one.
    expect((await call('/api/v1/api-tokens', `Token ${pat}`, { name: 'x', scopes: ['read'] })).status).toBe(403);
    const unknown = keep('unknown personal token', `${pat.slice(0, 12)}${'Z'.repeat(pat.length - 12)}`);
    expect((await call('/api/v1/user', `Bearer ${unknown}`)).status).toBe(401);
    expect((await call(`/api/v1/api-tokens/${created.id}`, token, undefined, 'DELETE')).status).toBe(204);
    expect((await call('/api/v1/user', `Token ${pat}`)).status).toBe(401);
  }

  const call = (path: string, auth: string | null, body?: unknown, method = body === undefined ? 'GET' : 'POST') =>
    fetch(`${url()}${path}`, { method, headers: { ...(auth ? { Authorization: auth } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });

  /** Keys of an encrypted form: passphrase and server modes, and refused requests carrying a passphrase or a private key. */
  async function encryptionKeys(token: string, formId: number): Promise<void> {
    const path = `/api/v1/forms/${formId}/encryption`;
    expect((await call(path, token, { mode: 'passphrase', passphrase: keep('form key passphrase', 'F0rm-key-passphrase-for-logs') })).status).toBe(201);
    expect((await call(path, token, { mode: 'passphrase', passphrase: keep('short form key passphrase', 'Sh0rt-pp') })).status).toBe(400);
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    keep('private key sent by mistake', pem.split('\n')[1]);
    expect((await call(path, token, { mode: 'self', private_key: pem, passphrase: secrets.get('form key passphrase') })).status).toBe(400);
    // Decrypt exports: the right passphrase, a wrong one, a private key that is not the form's, both at once.
    const decrypt = `/api/v1/forms/${formId}/decrypt`;
    const opened = await call(decrypt, token, { passphrase: secrets.get('form key passphrase'), format: 'csv' });
    expect(opened.status).toBe(200);
    await opened.arrayBuffer();
    expect((await call(decrypt, token, { passphrase: keep('wrong decrypt passphrase', 'Wr0ng-decrypt-passphrase'), format: 'zip' })).status).toBe(400);
    const decryptPem = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'pem', type: 'pkcs1' }) as string;
    keep('decrypt private key', decryptPem.split('\n')[1]);
    expect((await call(decrypt, token, { private_key: decryptPem, format: 'json' })).status).toBe(400);
    expect((await call(decrypt, token, { private_key: decryptPem, passphrase: secrets.get('form key passphrase'), format: 'csv' })).status).toBe(400);
    expect((await call(path, token, { mode: 'server' })).status).toBe(201);
    await serverModeEnvelopes(token, formId);
  }

  /**
   * Server mode: envelopes decrypted on receipt (one whole, one tampered), forwarded decrypted by
   * the worker. Their AES keys and the plaintext photo never reach a log line or the database.
   */
  async function serverModeEnvelopes(token: string, formId: number): Promise<void> {
    const xform = await (await call(`/api/v1/forms/${formId}/form.xml`, token)).text();
    const publicKey = /base64RsaPublicKey="([^"]*)"/.exec(xform)![1]!;
    const version = /<data id="logs_enc" version="([^"]*)"/.exec(xform)![1]!;
    const service = await call('/api/v1/restservices', token, { xform: formId, name: 'generic_json', service_url: `${receiver.url}/decrypted` });
    expect(service.status).toBe(201);
    const photo = randomBytes(2048);
    keep('plaintext photo bytes', photo.toString('base64').slice(0, 64));
    for (const tamper of [false, true]) {
      const instanceId = `uuid:${randomUUID()}`;
      const xml = `<data id="logs_enc" version="${version}"><name>x</name><household><photo>p.jpg</photo></household><meta><instanceID>${instanceId}</instanceID></meta></data>`;
      const env = encryptSubmission({ publicKey, formId: 'logs_enc', version, instanceId, submissionXml: xml, media: [{ name: 'p.jpg', bytes: photo }] });
      keep(`envelope AES key${tamper ? ' (tampered)' : ''}`, env.aesKey.toString('base64'));
      keep(`envelope AES key hex${tamper ? ' (tampered)' : ''}`, env.aesKey.toString('hex'));
      const form = new FormData();
      form.append('xml_submission_file', new Blob([env.manifest], { type: 'text/xml' }), 'submission.xml');
      for (const [name, bytes] of env.parts) {
        const part = Buffer.from(bytes);
        if (tamper && name === 'submission.xml.enc') part[5] ^= 1;
        form.append(name, new Blob([part]), name);
      }
      expect((await fetch(`${url()}/submission`, { method: 'POST', headers: { Authorization: token }, body: form })).status).toBe(201);
    }
    await until('the decrypted delivery', () => receiver.requests.some((r) => r.url === '/decrypted'));
    // Nor in the database: every row of the tables the submission and its deliveries live in, as text.
    const db = new pg.Client({ connectionString: collectDatabaseUrl });
    await db.connect();
    try {
      const dump = (await db.query(`SELECT (SELECT string_agg(t::text, ' ') FROM submissions t) || (SELECT string_agg(t::text, ' ') FROM submission_envelopes t)
        || (SELECT string_agg(t::text, ' ') FROM rest_deliveries t) || (SELECT coalesce(string_agg(t::text, ' '), '') FROM form_encryption_keys t) AS text`)).rows[0].text as string;
      expect(secrets.leaks([dump], 'database')).toEqual([]);
    } finally {
      await db.end();
    }
  }

  /** Messaging and signed services; deliveries fail (5xx then 2xx, 4xx, connection refused), are retried and re-sent by hand. */
  async function restServices(token: string): Promise<void> {
    const formId = ((await (await call('/api/v1/forms', token, { id_string: 'logs_rs', title: 'Rest services', fields: [{ name: 'name', type: 'text', label: 'Name' }] })).json()) as { formid: number }).formid;
    const authToken = keep('messaging auth_token', 'Msg-auth-token-for-logs-0123456789');
    const signing = `whsec_${randomBytes(32).toString('base64')}`;
    keep('signing secret', signing.slice('whsec_'.length));
    receiver.script('/flow', [{ status: 503, body: 'busy' }, { status: 200, body: 'ok' }]);
    receiver.script('/signed', [{ status: 400, body: 'refused' }]);
    const create = async (body: Record<string, unknown>, status = 201) => {
      const res = await call('/api/v1/restservices', token, { xform: formId, ...body });
      expect(res.status).toBe(status);
      return (await res.json()) as { id: number };
    };
    const flow = await create({ name: 'messaging', service_url: `${receiver.url}/flow`, auth_token: authToken, flow_uuid: 'f-1', contacts: 'a,b', signing_secret: signing });
    const signed = await create({ name: 'generic_json', service_url: `${receiver.url}/signed`, signing_secret: signing });
    const dead = await create({ name: 'messaging', service_url: 'http://127.0.0.1:9/dead', auth_token: authToken, flow_uuid: 'f-2', contacts: 'c' });
    // Refusals carrying the secrets: a missing field, a bad URL, a duplicate.
    await create({ name: 'messaging', service_url: `${receiver.url}/flow`, auth_token: authToken, signing_secret: signing }, 400);
    await create({ name: 'messaging', service_url: `http://user:${authToken}@127.0.0.1:9/x`, auth_token: authToken, flow_uuid: 'f', contacts: 'a' }, 400);
    await create({ name: 'generic_json', service_url: `${receiver.url}/signed`, signing_secret: signing }, 400);
    expect((await call(`/api/v1/restservices/${flow.id}`, token)).status).toBe(200);

    expect((await call('/api/v1/submissions', token, { id: 'logs_rs', submission: { name: 'x' } })).status).toBe(201);
    await until('deliveries', async () => receiver.to('/flow').length >= 2 && receiver.to('/signed').length >= 1
      && ((await (await call(`/api/v1/restservices/${dead.id}/deliveries?status=failed`, token)).json()) as unknown[]).length > 0);
    expect(receiver.to('/flow')[0].headers.authorization).toBe(`Token ${authToken}`);
    expect(receiver.to('/signed')[0].headers['webhook-signature']).toMatch(/^v1,/);
    // A hand-made retry of the refused delivery, and of every failed one.
    const [failed] = (await (await call(`/api/v1/restservices/${signed.id}/deliveries?status=failed`, token)).json()) as Array<{ id: number }>;
    expect((await call(`/api/v1/restservices/${signed.id}/deliveries/${failed.id}/retry`, token, {})).status).toBe(202);
    expect((await call(`/api/v1/restservices/${dead.id}/retry-failed`, token, {})).status).toBe(202);
    await until('the retried delivery', () => receiver.to('/signed').length >= 2);
    // A new token and secret by PATCH; PUT with them again.
    const patchedToken = keep('patched auth_token', 'Msg-auth-token-patched-for-logs-9876');
    const patchedSigning = `whsec_${randomBytes(24).toString('base64')}`;
    keep('patched signing secret', patchedSigning.slice('whsec_'.length));
    expect((await call(`/api/v1/restservices/${flow.id}`, token, { auth_token: patchedToken, signing_secret: patchedSigning }, 'PATCH')).status).toBe(200);
    expect((await call(`/api/v1/restservices/${flow.id}`, token, { xform: formId, name: 'messaging', service_url: `${receiver.url}/flow`, auth_token: patchedToken, flow_uuid: 'f-1', contacts: 'a', signing_secret: patchedSigning }, 'PUT')).status).toBe(200);
    expect((await call('/api/v1/submissions', token, { id: 'logs_rs', submission: { name: 'y' } })).status).toBe(201);
    await until('the delivery with the patched token', () => receiver.to('/flow').some((r) => r.headers.authorization === `Token ${patchedToken}`));

    // Extra headers and Basic credentials: delivered (a failure first), test-fired, patched, refused.
    const bearer = keep('extra Authorization header', 'Bearer hdr-token-for-logs-5566778899');
    const apiKey = keep('extra X-Api-Key header', 'Api-key-for-logs-1122334455');
    const basicPassword = keep('Basic password', 'B4sic-password-for-logs-99887766');
    keep('Basic credentials (base64)', Buffer.from(`rx-user:${basicPassword}`).toString('base64'));
    receiver.script('/hdr', [{ status: 503, body: 'busy' }, { status: 200, body: 'ok' }]);
    const hdr = await create({ name: 'generic_json', service_url: `${receiver.url}/hdr`, headers: { Authorization: bearer, 'X-Api-Key': apiKey } });
    const bas = await create({ name: 'generic_xml', service_url: `${receiver.url}/bas`, basic_auth_username: 'rx-user', basic_auth_password: basicPassword });
    await create({ name: 'generic_json', service_url: `${receiver.url}/bad`, headers: { 'X-Delivery-Id': apiKey } }, 400);
    await create({ name: 'generic_json', service_url: `${receiver.url}/bad`, basic_auth_password: basicPassword }, 400);
    expect((await call('/api/v1/submissions', token, { id: 'logs_rs', submission: { name: 'z' } })).status).toBe(201);
    await until('the header and Basic deliveries', () => receiver.to('/hdr').length >= 2 && receiver.to('/bas').length >= 1);
    expect(receiver.to('/hdr')[1].headers.authorization).toBe(bearer);
    expect(receiver.to('/bas')[0].headers.authorization).toBe(`Basic ${Buffer.from(`rx-user:${basicPassword}`).toString('base64')}`);
    for (const svc of [hdr, bas]) {
      const fired = await call(`/api/v1/restservices/${svc.id}/test`, token, {});
      expect(fired.status).toBe(200);
      expect(await fired.text()).not.toMatch(/hdr-token|Api-key-for|B4sic-password/);
    }
    const newKey = keep('patched X-Api-Key header', 'Api-key-patched-for-logs-6677');
    expect((await call(`/api/v1/restservices/${hdr.id}`, token, { headers: { 'X-Api-Key': newKey } }, 'PATCH')).status).toBe(200);
  }

  /** A spreadsheet service: consent URL, the provider's code at the callback (a refused one first), the token exchange with the client secret. */
  async function sheetsGrant(token: string): Promise<void> {
    const formId = ((await (await call('/api/v1/forms', token, { id_string: 'logs_sheet', title: 'Sheet', fields: [{ name: 'name', type: 'text', label: 'Name' }] })).json()) as { formid: number }).formid;
    const res = await call('/api/v1/restservices', token, { xform: formId, name: 'spreadsheet', spreadsheet_title: 'Logs' });
    expect(res.status).toBe(201);
    const consent = new URL(((await res.json()) as { authorization_url: string }).authorization_url);
    const state = keep('sheets state', consent.searchParams.get('state'));
    const redirect = consent.searchParams.get('redirect_uri')!;
    // A code the provider does not know: the exchange is refused (the state is single use, so this needs a second
    // service: on another form, as two unlinked sheets of one form share the default service_url).
    const otherForm = ((await (await call('/api/v1/forms', token, { id_string: 'logs_sheet2', title: 'Sheet 2', fields: [{ name: 'name', type: 'text', label: 'Name' }] })).json()) as { formid: number }).formid;
    const other = await call('/api/v1/restservices', basic('logadmin', secrets.get('admin password')), { xform: otherForm, name: 'spreadsheet', spreadsheet_title: 'Logs 2' });
    expect(other.status).toBe(201);
    const otherState = keep('sheets state (refused)', new URL(((await other.json()) as { authorization_url: string }).authorization_url).searchParams.get('state'));
    const badCode = keep('sheets code (refused)', 'Sheets-unknown-code-for-logs-4321');
    expect((await call(`/api/v1/restservices/sheets/callback?code=${badCode}&state=${otherState}`, basic('logadmin', secrets.get('admin password')))).status).toBe(400);
    const code = keep('sheets authorization code', 'Sheets-code-for-logs-1234567');
    sheets.codes.set(code, redirect);
    expect((await call(`/api/v1/restservices/sheets/callback?code=${code}&state=${encodeURIComponent(state)}`, token)).status).toBe(200);
    expect(sheets.sheets.size).toBe(1);
  }

  /** CAS: a client-credentials token as Bearer (unlinked, forged, linked), on-boarding through cas-api, the BFF sign-in with its cookies. */
  async function casFlows(): Promise<void> {
    const admin = basic('logadmin', secrets.get('admin password'));
    const { token_endpoint } = (await (await fetch(`${cas.url}/.well-known/openid-configuration`)).json()) as { token_endpoint: string };
    const tokenRes = await fetch(token_endpoint, {
      method: 'POST',
      headers: { Authorization: basic('logs-machine', 'M4chine-secret-for-collect-logs'), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'read write' }).toString(),
    });
    expect(tokenRes.status).toBe(200);
    const access = keep('CAS access token', ((await tokenRes.json()) as { access_token: string }).access_token);
    expect((await call('/api/v1/user', `Bearer ${access}`)).status).toBe(403); // not linked yet
    expect((await call('/api/v1/user', `Bearer ${access.slice(0, -4)}AAAA`)).status).toBe(401); // forged signature
    expect((await call('/api/v1/service-accounts', admin, { client_id: 'logs-machine' })).status).toBe(201);
    expect((await call('/api/v1/user', `Bearer ${access}`)).status).toBe(200);
    // A token in the URL beside the header is refused (RFC 6750 §2, passport-http-bearer), and logged without it.
    expect((await call(`/api/v1/user?access_token=${access}`, `Bearer ${access}`)).status).toBe(401);

    // On-boarding: collect-api's own client-credentials token for cas-api (CAS_ONBOARDING_CLIENT_SECRET).
    const found = (await (await call('/api/v1/cas-users?search=logcas', admin)).json()) as { results: Array<{ id: string; username: string }> };
    const subject = found.results.find((u) => u.username === 'logcas')!.id;
    expect((await call('/api/v1/cas-users', admin, { cas_user_id: subject })).status).toBe(201);

    // The BFF sign-in (CAS_CLIENT_SECRET at the token endpoint), cookie by cookie.
    const jar = new FormLogin(cas.url);
    const start = await jar.fetch(`${url()}/auth/login?return_to=/login`);
    expect(start.status).toBe(302);
    keep('sign-in binding cookie', cookieValue(start, 'collect_session_login'));
    const callback = await jar.authorize(start.headers.get('location')!, 'logcas', 'C4s-user-pa55word-for-collect-logs');
    keep('CAS authorization code', callback.searchParams.get('code'));
    keep('CAS sign-in state', callback.searchParams.get('state'));
    const back = `${url()}${callback.pathname}${callback.search}`;
    const signedIn = await jar.fetch(back);
    expect(signedIn.status).toBe(303);
    const session = keep('collect_session cookie', cookieValue(signedIn, 'collect_session'));
    expect((await jar.fetch(back)).status).toBe(400); // the callback replayed: refused and logged
    expect(await (await fetch(`${url()}/login`, { headers: { cookie: `collect_session=${session}` } })).text()).toContain('logcas');
    // The /tokens page: a token created there, shown once, used once.
    const page = await fetch(`${url()}/tokens`, { headers: { cookie: `collect_session=${session}` } });
    expect(page.status).toBe(200);
    const csrf = hiddenFields(await page.text()).csrf_token;
    const createdPage = await fetch(`${url()}/tokens`, {
      method: 'POST', headers: { cookie: `collect_session=${session}`, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf_token: csrf, name: 'from the page', scope: 'read' }).toString(),
    });
    expect(createdPage.status).toBe(200);
    const pagePat = keep('personal access token (page)', /id="new-token"[^>]*>(cpat_[A-Za-z0-9_-]+)</.exec(await createdPage.text())?.[1]);
    expect((await call('/api/v1/user', `Bearer ${pagePat}`)).status).toBe(200);
    // A forged session id next to the real one, then the logout (RP-initiated: the CAS end-session URL with the ID token).
    expect((await fetch(`${url()}/login`, { headers: { cookie: `collect_session=${session.slice(0, -2)}xx` } })).status).toBe(200);
    const logout = await fetch(`${url()}/auth/logout`, { method: 'POST', redirect: 'manual', headers: { cookie: `collect_session=${session}` } });
    expect(logout.status).toBe(303);
    keep('CAS ID token', new URL(logout.headers.get('location')!).searchParams.get('id_token_hint'));
  }
});
