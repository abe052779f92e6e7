import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ExportRunner } from '../src/exports/export-runner.js';
import { casUserId, machineToken, startCasEnv, type CasEnv } from './cas-env.js';
import { demoInstance, demoXForm, jpeg } from './forms-fixtures.js';
import type { TestCollectApp } from './test-app.js';
import { listRoutes } from './routes.js';
import { createTestBearerToken, createTestUser, type TestUser } from './test-users.js';
import { CALLERS, CREDENTIAL_FIELDS, MAY_READ_MESSAGING_SECRET, MESSAGING_SECRET, OWN_CREDENTIAL, PAT_CALLERS, PAT_SCOPES, ROLES, ROLE_CALLERS, SCOPED_CALLERS, SCOPE_CALLERS, TABLE, cas, ownFixture, patExpect, scopeExpect, uniq, type Call, type Caller, type Fixture, type SharedExtras } from './permission-matrix-table.js';

/**
 * One permission matrix for every collect-api route × every kind of caller, expected statuses
 * from docs/api-conventions.md (§Roles and permissions, §Errors). Routes are read from the
 * Express router at run time: a route without a row here fails the test, so a new endpoint
 * cannot ship without its permissions written down.
 *
 * `service` is a CAS service account without a grant: a real CAS (apps/cas, child process, dev
 * seed) issues the dev seed's `demo-machine` client a client-credentials access token (scope
 * `read write`, aud collect-api), and the client is linked as a service account. It has no role
 * on any form, so it answers like `stranger`, except where the scheme matters (Basic-only routes).
 *
 * `admin` is a platform admin (is_superuser) with no role on any form. FormAccessService treats
 * platform admins as owners of every form (they see and change all of them); docs/api-conventions.md only
 * says that they, and nobody else, use /api/v1/cas-users and /api/v1/service-accounts.
 *
 * The scope axis: the owner again through a read-only Bearer token, a read-write
 * Bearer token (both local `/o/` tokens) and their `Token`, on every route. A Bearer token
 * needs `read` for safe methods and `write` for the others, and never reveals nor creates an
 * unscoped credential (docs/security.md, "The credential rule"): no answer to a Bearer caller
 * (these two and the CAS `service`) may hold a credential field or a known secret value, and the
 * routes that reveal them to `Token` callers are checked to do so (so the check cannot pass empty).
 *
 * The personal-token axis (docs/auth.md, "Personal access tokens"): the owner again through a
 * personal token of each scope (`read`, `submit`, `write`), each also narrowed to another form of
 * the owner's (`-elsewhere`), and through an expired and a revoked one, on every route. A token
 * needs the scope its route's class accepts (SUBMIT_CLASS, account routes, else by method),
 * a narrowed one is 403 on a form outside it, an expired or revoked one is a 401 everywhere the
 * Authorization header is read; like Bearer answers, no answer to it may hold a credential.
 */

describe('hardening: one permission matrix for every collect-api route', () => {
  let env: CasEnv;
  let sut: TestCollectApp;
  let owner: TestUser;
  /** Authorization header values per caller: API token, and Basic (the service account has only its Bearer). */
  const creds = {} as Record<Exclude<Caller, 'anonymous'>, { username: string; token: string; basic: string }>;
  /** The owner's API and temporary token and OAuth client secrets: no other caller may read them. */
  const ownerSecrets = new Set<string>();

  beforeAll(async () => {
    // A real CAS (child process) for the service account's token and the on-boarding rows.
    // A pool of ONE connection: a route that holds a connection and waits for a second stalls
    // here at once, where under a larger pool it stalled only when concurrent requests held them
    // all (docs/architecture.md, "Database connections").
    // The expired and revoked personal tokens fail authentication on every route, on purpose: the
    // per-address failure limit would soon refuse every caller of this one address.
    env = await startCasEnv({ AUTH_TOKEN_CACHE_TTL_MS: '0', DATABASE_POOL_SIZE: '1', RATE_LIMIT_AUTH_FAILURES_PER_IP: '1000000' });
    sut = env.collect;
    const api = () => request(sut.url);
    const asAdmin = (r: request.Test) => r.set('Authorization', env.admin.token);
    owner = await createTestUser(sut.app);
    creds.owner = owner;
    for (const who of ROLE_CALLERS) if (!['owner', 'anonymous', 'service', 'admin'].includes(who)) creds[who as Exclude<Caller, 'anonymous'>] = await createTestUser(sut.app);
    creds.admin = env.admin;
    // The scope axis: the owner through local /o/ Bearer tokens (read; read write groups) and its API token.
    for (const [who, scope] of [['bearer-read', 'read'], ['bearer-rw', 'read write groups']] as const) {
      const bearer = await createTestBearerToken(sut.app, owner, scope);
      creds[who] = { username: owner.username, token: bearer, basic: bearer };
    }
    creds.token = { username: owner.username, token: owner.token, basic: owner.token };
    // The personal-token axis: the owner's tokens, unnarrowed (as Token) and narrowed to a form no row acts on (as Bearer).
    const elsewhere = (await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm(`e${uniq()}`)).expect(201)).body.formid as number;
    const mint = async (scopes: string[], forms?: number[]) =>
      (await api().post('/api/v1/api-tokens').set('Authorization', owner.basic).send({ name: 'matrix', scopes, forms }).expect(201)).body as { id: number; token: string };
    for (const scope of PAT_SCOPES) {
      const plain = `Token ${(await mint([scope])).token}`;
      const narrowed = `Bearer ${(await mint([scope], [elsewhere])).token}`;
      creds[`pat-${scope}`] = { username: owner.username, token: plain, basic: plain };
      creds[`pat-${scope}-elsewhere`] = { username: owner.username, token: narrowed, basic: narrowed };
    }
    const expired = await mint(['write']);
    await sut.app.get(DataSource).query(`UPDATE personal_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.id]);
    const revoked = await mint(['write']);
    await api().delete(`/api/v1/api-tokens/${revoked.id}`).set('Authorization', owner.token).expect(204);
    creds['pat-expired'] = { username: owner.username, token: `Token ${expired.token}`, basic: `Token ${expired.token}` };
    creds['pat-revoked'] = { username: owner.username, token: `Bearer ${revoked.token}`, basic: `Bearer ${revoked.token}` };
    const me = (await api().get('/api/v1/user').set('Authorization', owner.token).expect(200)).body as { api_token: string; temp_token: string };
    ownerSecrets.add(me.api_token).add(me.temp_token);
    // `service`: the dev seed's client-credentials client, linked as a service account, no form shared with it.
    await asAdmin(api().post('/api/v1/service-accounts')).send({ client_id: 'demo-machine' }).expect(201);
    const bearer = `Bearer ${await machineToken(env, 'read write')}`;
    creds.service = { username: 'demo-machine', token: bearer, basic: bearer };
    await api().get('/api/v1/user').set('Authorization', bearer).expect(200);
    // On-boarding rows: alice is on-boarded by the admin's POST, mallory (on-boarded here) off-boarded by its DELETE.
    [cas.onboardId, cas.offboardId] = await Promise.all([casUserId(env, 'alice'), casUserId(env, 'mallory')]);
    await asAdmin(api().post('/api/v1/cas-users')).send({ cas_user_id: cas.offboardId }).expect(201);
    await asAdmin(api().post('/api/v1/service-accounts')).send({ client_id: cas.spareClientId }).expect(201);
  });
  afterAll(() => env?.close());

  const auth = (who: Caller, basic = false): string | undefined => (who === 'anonymous' ? undefined : basic ? creds[who].basic : creds[who].token);

  async function fixture(withShared = false): Promise<Fixture> {
    const ownerAuth = auth('owner')!;
    // The form loads the list as `<name>.csv` (select_one_from_file): its manifest offers the list.
    const listName = `l${uniq()}`;
    const make = async (idString: string) => {
      const xml = demoXForm(idString).replace('</instance>', `</instance><instance id="lst" src="jr://file-csv/${listName}.csv"/>`);
      const formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', ownerAuth).set('Content-Type', 'application/xml').send(xml).expect(201)).body.formid as number;
      await Promise.all(ROLES.slice(1).map((role) => request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', ownerAuth).send({ username: creds[role].username, role }).expect(204)));
      return formId;
    };
    const idString = `m${uniq()}`;
    const [formId, otherFormId] = await Promise.all([make(idString), make(`o${uniq()}`)]);
    await request(sut.url).post('/api/v1/submissions').set('Authorization', ownerAuth).send({ id: idString, submission: { name: 'x' } }).expect(201);
    const [{ _id: submissionId, _uuid: submissionUuid }] = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', ownerAuth).expect(200)).body as Array<{ _id: number; _uuid: string }>;
    const dataviewId = (await request(sut.url).post('/api/v1/dataviews').set('Authorization', ownerAuth).send({ name: 'v', xform: formId, columns: ['name'], query: [] }).expect(201)).body.id as number;
    const mergedId = (await request(sut.url).post('/api/v1/merged-datasets').set('Authorization', ownerAuth).send({ name: 'm', xforms: [formId, otherFormId] }).expect(201)).body.id as number;
    const app = (await request(sut.url).post('/api/v1/oauth-applications').set('Authorization', ownerAuth).send({ name: 'a', redirect_uris: 'https://c.example/cb' }).expect(201)).body as { id: number; client_secret: string };
    ownerSecrets.add(app.client_secret);
    // An entity list the form uses (a follow-up form reads it): linked as publishing links a form that reads `<list>.csv`.
    const listId = (await request(sut.url).post('/api/v2/entity-lists').set('Authorization', ownerAuth).send({ name: listName }).expect(201)).body.id as number;
    await sut.app.get(DataSource).query(`INSERT INTO entity_list_forms (list_id, form_id, actions) VALUES ($1, $2, '{}')`, [listId, formId]);
    const entityId = (await request(sut.url).post(`/api/v2/entity-lists/${listId}/entities`).set('Authorization', ownerAuth).send({ label: 'tree' }).expect(201)).body.id as number;
    const f: Fixture = { owner: creds.owner.username, formId, idString, otherFormId, submissionId, submissionUuid, dataviewId, mergedId, appId: app.id, listId, listName, entityId };
    if (withShared) f.shared = await sharedExtras(f);
    return f;
  }

  /** An OpenRosa submission with a photo (one media row), rest services, and one failed delivery per caller. */
  async function sharedExtras(f: Fixture): Promise<SharedExtras> {
    const ownerAuth = auth('owner')!;
    await request(sut.url).post('/submission').set('Authorization', ownerAuth).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: randomUUID(), idString: f.idString })), { filename: 'submission.xml', contentType: 'text/xml' })
      .attach('house.jpg', await jpeg(), { filename: 'house.jpg', contentType: 'image/jpeg' })
      .expect(201);
    const [media] = (await request(sut.url).get(`/api/v1/media?xform=${f.formId}`).set('Authorization', ownerAuth).expect(200)).body as Array<{ id: number; filename: string }>;
    const service = async () =>
      (await request(sut.url).post('/api/v1/restservices').set('Authorization', ownerAuth).send({ xform: f.formId, name: 'generic_json', service_url: `http://127.0.0.1:9/s${uniq()}` }).expect(201)).body.id as number;
    const [serviceId, retryServiceId, ...deleteIds] = await Promise.all([service(), service(), ...CALLERS.map(() => service())]);
    const messagingId = (await request(sut.url).post('/api/v1/restservices').set('Authorization', ownerAuth)
      .send({ xform: f.formId, name: 'messaging', service_url: 'http://127.0.0.1:9/flow', auth_token: MESSAGING_SECRET, flow_uuid: 'f-1', contacts: 'a' }).expect(201)).body.id as number;
    // A finished delivery and its log entry, written as the worker writes them after a refused attempt (no waiting for a real one).
    const db = sut.app.get(DataSource);
    const entries = await Promise.all(CALLERS.map(async () => {
      const [{ id: row }] = await db.query(`INSERT INTO rest_deliveries (delivery_id, service_id, submission_id, event, status, attempts) VALUES (gen_random_uuid(), $1, $2, 'created', 'failed', 1) RETURNING id`, [retryServiceId, f.submissionId]);
      const [{ id }] = await db.query(`INSERT INTO rest_delivery_attempts (delivery_row_id, service_id, attempt, status, status_code, latency_ms, error, event) VALUES ($1, $2, 1, 'failed', NULL, 1, 'connect ECONNREFUSED', 'created') RETURNING id`, [row, retryServiceId]);
      return Number(id);
    }));
    // A finished asynchronous export: queued by the API, its file written by the worker's handler (run here).
    const exportId = (await request(sut.url).post('/api/v1/export').set('Authorization', ownerAuth).send({ xform: f.formId, format: 'csv' }).expect(202)).body.id as string;
    await sut.app.get(ExportRunner).run({ exportId });
    expect((await request(sut.url).get(`/api/v1/export/${exportId}`).set('Authorization', ownerAuth).expect(200)).body).toMatchObject({ status: 'done' });
    // A replay of nothing (an id no submission has): over at once, so GET and DELETE change nothing.
    const replayId = (await request(sut.url).post(`/api/v1/restservices/${serviceId}/replay`).set('Authorization', ownerAuth).send({ submission_ids: [2_000_000_000] }).expect(202)).body.id as number;
    const metadata = async () =>
      (await request(sut.url).post('/api/v1/metadata').set('Authorization', ownerAuth).field('xform', String(f.formId)).field('data_type', 'media').field('data_value', `s${uniq()}.csv`)
        .attach('data_file', Buffer.from('a,b\n'), 's.csv').expect(201)).body.id as number;
    const [metadataId, ...deleteMetadataIds] = await Promise.all([metadata(), ...CALLERS.map(() => metadata())]);
    const deleteTokenIds = await Promise.all(CALLERS.map(async () =>
      (await request(sut.url).post('/api/v1/api-tokens').set('Authorization', ownerAuth).send({ name: 'to delete', scopes: ['read'] }).expect(201)).body.id as number));
    return {
      exportId,
      replayId,
      metadataId,
      deleteTokenId: Object.fromEntries(CALLERS.map((c, i) => [c, deleteTokenIds[i]])) as Record<Caller, number>,
      deleteMetadataId: Object.fromEntries(CALLERS.map((c, i) => [c, deleteMetadataIds[i]])) as Record<Caller, number>,
      mediaId: media.id,
      mediaFilename: media.filename,
      serviceId,
      messagingId,
      retryServiceId,
      retryEntry: Object.fromEntries(CALLERS.map((c, i) => [c, entries[i]])) as Record<Caller, number>,
      deleteServiceId: Object.fromEntries(CALLERS.map((c, i) => [c, deleteIds[i]])) as Record<Caller, number>,
    };
  }

  /** Scope callers send their own credential even where a row asks for Basic. */
  async function send(method: string, who: Caller, c: Call): Promise<{ status: number; text: string; body: unknown }> {
    let req = request(sut.url)[method.toLowerCase() as 'get'](c.path);
    const credentials = auth(who, c.basic && !OWN_CREDENTIAL.has(who));
    if (credentials) req = req.set('Authorization', credentials);
    let res: request.Response;
    if (c.attachXml) res = await req.attach(c.attachXml.field, Buffer.from(c.attachXml.xml), 'submission.xml');
    else if (c.form) {
      for (const [name, value] of Object.entries(c.form.fields)) req = req.field(name, value);
      for (const [name, file] of Object.entries(c.form.files)) req = req.attach(name, file.data, file.name);
      res = await req;
    }
    else if (c.raw) res = await req.set('Content-Type', c.raw.type).send(c.raw.text);
    else if (c.body && method !== 'GET' && method !== 'HEAD') res = await ((c.path.startsWith('/o/') || c.path.startsWith('/tokens')) ? req.type('form') : req).send(c.body);
    else res = await req;
    return { status: res.status, text: res.text ?? '', body: res.body };
  }

  /**
   * What an answer must not hold: credential keys (Bearer callers, outside the API description),
   * the owner's secrets (anyone but the owner), the messaging secret (below editor, and Bearer).
   */
  function leaksIn(route: string, who: Caller, answer: { text: string; body: unknown }): string[] {
    const found: string[] = [];
    if (SCOPED_CALLERS.has(who) && !route.startsWith('GET /api/docs')) {
      const walk = (v: unknown): void => {
        if (Array.isArray(v)) v.forEach(walk);
        else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) {
          if (CREDENTIAL_FIELDS.includes(k)) found.push(k);
          walk(x);
        }
      };
      walk(answer.body);
      if (/^"[0-9a-f]{40}"$/.test(answer.text.trim())) found.push('a bare 40-hex key');
    }
    const forbidden = [...(who === 'owner' || who === 'token' ? [] : ownerSecrets), ...(MAY_READ_MESSAGING_SECRET.has(who) ? [] : [MESSAGING_SECRET])];
    for (const secret of forbidden) if (answer.text.includes(secret)) found.push(`the value of ${secret === MESSAGING_SECRET ? 'the messaging auth_token' : 'a secret of the owner'}`);
    return found;
  }

  it('every route of the router has a row, and every row a route', () => {
    const routes = listRoutes(sut.app);
    const covered = new Set(TABLE.map((r) => r.route));
    expect(routes.filter((r) => !covered.has(r))).toEqual([]);
    expect([...covered].filter((r) => !routes.includes(r))).toEqual([]);
  });

  it('answers each (route, caller) pair as docs/api-conventions.md says, and no Bearer answer carries a credential', async () => {
    const shared = await fixture(true);
    // Before the table (whose last row rotates the owner's API token). The stored messaging secret: in clear for editors and above with a full credential, masked otherwise.
    const token = async (who: Caller) => ((await send('GET', who, { path: `/api/v1/restservices/${shared.shared!.messagingId}` })).body as { auth_token?: string }).auth_token;
    for (const who of ['token', 'owner', 'manager', 'editor', 'admin'] as const) expect(await token(who)).toBe(MESSAGING_SECRET);
    for (const who of ['bearer-read', 'bearer-rw', 'pat-read', 'pat-write', 'dataentry', 'readonly'] as const) expect(await token(who)).toBe('********');
    const got: Record<string, Record<Caller, number>> = {};
    const want: Record<string, Record<Caller, number>> = {};
    const leaks: string[] = [];
    const revealed: string[] = [];
    const wantRevealed: string[] = [];
    let pairs = 0;
    let scopePairs = 0;
    let patPairs = 0;
    let n = 0;
    // regenerate_auth_token rotates the caller's API token: run it last so the others keep theirs.
    const ordered = [...TABLE.filter((r) => !r.route.includes('regenerate')), ...TABLE.filter((r) => r.route.includes('regenerate'))];
    for (const row of ordered) {
      if (got[row.route]) continue;
      const [method] = row.route.split(' ');
      got[row.route] = {} as Record<Caller, number>;
      want[row.route] = { ...row.expect, ...scopeExpect(row), ...patExpect(row) };
      // A fixture of its own for every caller but the personal tokens the row expects refused (a
      // wrong success of theirs destroys the shared fixture, and fails this row or later ones):
      // 13 fixtures per row, not 20, which keeps the matrix's time and the owner's reads in bounds.
      const fresh = row.fresh ? await Promise.all(CALLERS.map((who) => (ownFixture(row, who) ? fixture() : Promise.resolve(shared)))) : [];
      for (const [i, who] of CALLERS.entries()) {
        const answer = await send(method, who, row.call(row.fresh ? fresh[i] : shared, who, ++n));
        got[row.route][who] = answer.status;
        pairs++;
        if ((SCOPE_CALLERS as readonly string[]).includes(who)) scopePairs++;
        if ((PAT_CALLERS as readonly string[]).includes(who)) patPairs++;
        for (const leak of leaksIn(row.route, who, answer)) leaks.push(`${row.route} as ${who}: ${leak}`);
        if (who === 'token' && row.reveals) {
          for (const field of row.reveals) {
            wantRevealed.push(`${row.route} ${field}`);
            const value = field === 'body' ? answer.body : (answer.body as Record<string, unknown> | undefined)?.[field];
            if (typeof value === 'string' && value.length >= 8 && value !== '********') revealed.push(`${row.route} ${field}`);
          }
        }
      }
    }
    const differ = Object.keys(want).flatMap((route) => CALLERS.filter((who) => got[route][who] !== want[route][who]).map((who) => `${route} as ${who}: ${got[route][who]}, not ${want[route][who]}`));
    expect(differ).toEqual([]);
    expect(got).toEqual(want);
    expect(leaks).toEqual([]);
    expect(revealed).toEqual(wantRevealed);
    const routes = Object.keys(got).length;
    console.log(`permission matrix: ${pairs} (route, caller) pairs checked over ${routes} routes × ${CALLERS.length} callers; scope axis ${scopePairs} pairs (${routes} routes × ${SCOPE_CALLERS.length} scopes), personal-token axis ${patPairs} pairs (${routes} routes × ${PAT_CALLERS.length} tokens), credential fields checked on ${wantRevealed.length} revealing routes and every Bearer answer`);
  }, 600_000);
});
