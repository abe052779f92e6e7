import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { SheetsBackfillReplays1764840000001 } from '../src/migrations/1764840000001-sheets-backfill-replays.js';
import { SHEET_META_COLUMNS } from '../src/restservices/sheets/sheets.service.js';
import { demoXForm } from './forms-fixtures.js';
import { until } from './restservices-receiver.js';
import { FakeSheetsProvider } from './restservices-sheets.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestBearerToken, createTestUser, type TestUser } from './test-users.js';

describe('rest services: spreadsheet sync against a Google-Sheets-v4-shaped provider', () => {
  let sut: TestCollectApp;
  let sheets: FakeSheetsProvider;
  let owner: TestUser;

  beforeAll(async () => {
    sheets = await new FakeSheetsProvider().start();
    sut = await startTestCollectApp({
      FORWARD_RELAY_INTERVAL_MS: '50', FORWARD_BACKOFF_BASE_MS: '50', FORWARD_TIMEOUT_MS: '5000',
      SHEETS_API_BASE_URL: sheets.url, SHEETS_OAUTH_AUTHORIZE_URL: `${sheets.url}/o/oauth2/auth`, SHEETS_OAUTH_TOKEN_URL: `${sheets.url}/token`,
      SHEETS_CLIENT_ID: sheets.clientId, SHEETS_CLIENT_SECRET: sheets.clientSecret,
    }, { worker: true });
    owner = await createTestUser(sut.app);
  });
  afterAll(async () => {
    await sut.close();
    await sheets.close();
  });

  const api = () => request(sut.url);
  const newForm = async (idString: string) =>
    (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
  const submit = (idString: string, submission: Record<string, unknown>) => api().post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission }).expect(201);
  const submitMany = async (idString: string, count: number) => {
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < count) {
        const i = next++;
        await submit(idString, { name: `n${i}`, age: String(i) });
      }
    }));
  };
  const ids = async (formId: number) => ((await api().get(`/api/v1/data/${formId}`).query({ page_size: 10000 }).set('Authorization', owner.token).expect(200)).body as Array<{ _id: number }>).map((s) => s._id).sort((a, b) => a - b);
  const sheetOf = async (pk: number) => {
    const svc = (await api().get(`/api/v1/restservices/${pk}`).set('Authorization', owner.token).expect(200)).body;
    return sheets.sheets.get(svc.spreadsheet_id)!;
  };
  /** Polls the back-fill's replay resource until it is done; every body read on the way. */
  const followReplay = async (pk: number, replayId: number, timeoutMs = 30_000) => {
    const seen: Array<{ status: string; total: number; done: number; failed: number }> = [];
    await until(`replay ${replayId} done`, async () => {
      const body = (await api().get(`/api/v1/restservices/${pk}/replays/${replayId}`).set('Authorization', owner.token).expect(200)).body;
      seen.push(body);
      return body.status === 'done';
    }, timeoutMs);
    return seen;
  };

  it('the consent state completes only for the user who created the service: no login CSRF', async () => {
    const [sender, victim] = [await createTestUser(sut.app), await createTestUser(sut.app)];
    const formId = (await api().post('/api/v1/forms').set('Authorization', sender.token).attach('xml_file', Buffer.from(demoXForm('csrf_sheet_form')), 'form.xml').expect(201)).body.formid;
    const created = await api().post('/api/v1/restservices').set('Authorization', sender.token).send({ xform: formId, name: 'spreadsheet', spreadsheet_title: 'Mine' }).expect(201);
    const state = new URL(created.body.authorization_url).searchParams.get('state')!;
    // The sender passes the consent URL to someone else, whose browser comes back with their code.
    sheets.codes.set('victims-code', `${sut.config.PUBLIC_BASE_URL}/api/v1/restservices/sheets/callback`);
    const callback = () => api().get('/api/v1/restservices/sheets/callback').query({ code: 'victims-code', state });
    const anonymous = await callback().expect(401);
    expect(anonymous.headers['www-authenticate']).toBe('Basic realm="api"');
    await callback().set('Authorization', victim.token).expect(400, { detail: 'Unknown or expired state.' });
    await callback().set('Authorization', await createTestBearerToken(sut.app, sender, 'read')).expect(403);
    const before = sheets.sheets.size;
    // The state is still the sender's to complete, and links the sender's service.
    await callback().set('Authorization', sender.token).expect(200, { detail: 'Sheet provider access granted.', restservice: created.body.id });
    expect(sheets.sheets.size).toBe(before + 1);
  });

  it('create without a grant answers authorization_url (redirect_uri override); the callback stores the grant, links the sheet and back-fills 500 rows in _id order; edits rewrite, deletes clear', async () => {
    const formId = await newForm('sheet_form');
    await submitMany('sheet_form', 500);

    const created = await api().post('/api/v1/restservices').set('Authorization', owner.token)
      .send({ xform: formId, name: 'spreadsheet', spreadsheet_title: 'Survey sheet', send_existing_data: true, sync_updates: true, redirect_uri: 'https://client.example/sheets-done' }).expect(201);
    expect(created.body).toMatchObject({ xform: formId, name: 'spreadsheet', spreadsheet_title: 'Survey sheet', send_existing_data: true, sync_updates: true, redirect_uri: 'https://client.example/sheets-done', active: false });
    const consent = new URL(created.body.authorization_url);
    expect(`${consent.origin}${consent.pathname}`).toBe(`${sheets.url}/o/oauth2/auth`);
    expect(Object.fromEntries(consent.searchParams)).toEqual({
      response_type: 'code', client_id: sheets.clientId, redirect_uri: 'https://client.example/sheets-done', scope: 'https://www.googleapis.com/auth/spreadsheets',
      access_type: 'offline', prompt: 'consent', state: expect.any(String),
    });

    // The provider redirects to the client's redirect_uri with a code; the client hands it on.
    sheets.codes.set('code-1', 'https://client.example/sheets-done');
    const callback = (query: Record<string, unknown>) => api().get('/api/v1/restservices/sheets/callback').query(query);
    await callback({ code: 'code-1', state: 'forged' }).set('Authorization', owner.token).expect(400);
    const cb = await callback({ code: 'code-1', state: consent.searchParams.get('state') }).set('Authorization', owner.token).expect(200);
    expect(cb.body).toEqual({ detail: 'Sheet provider access granted.', restservice: created.body.id });
    await callback({ code: 'code-1', state: consent.searchParams.get('state') }).set('Authorization', owner.token).expect(400); // single use

    const svc = (await api().get(`/api/v1/restservices/${created.body.id}`).set('Authorization', owner.token).expect(200)).body;
    expect(svc).toMatchObject({ active: true, inactive_reason: null, spreadsheet_id: expect.any(String) });
    const sheet = await sheetOf(svc.id);
    expect(sheet.title).toBe('Survey sheet');
    // The back-fill is a replay of the service: its progress reads at GET .../replays/{id}.
    expect(svc.backfill_replay).toEqual(expect.any(Number));
    const progress = await followReplay(svc.id, svc.backfill_replay);
    expect(progress[progress.length - 1]).toMatchObject({ id: svc.backfill_replay, status: 'done', total: 500, done: 500, failed: 0 });
    // Seen on the way: 100 rows per append at the sheet's 60 writes/min, so some reads fall between.
    expect(progress.some((p) => p.done > 0 && p.done < 500)).toBe(true);
    expect(sheet.rows).toHaveLength(501);
    const header = sheet.rows[0];
    expect(header.slice(0, 4)).toEqual(['name', 'age', 'location', 'household/size']);
    expect(header.slice(-SHEET_META_COLUMNS.length)).toEqual(SHEET_META_COLUMNS);
    const idCol = header.indexOf('_id');
    const existing = await ids(formId);
    expect(sheet.rows.slice(1).map((r) => Number(r[idCol]))).toEqual(existing);
    expect(sheet.rows[1][0]).toMatch(/^n\d+$/);
    // Batched: 500 rows in five appends of 100, not 500 calls; each row is still a delivery in the log.
    expect(sheets.calls.filter((c) => c.method === 'append').map((c) => c.rows)).toEqual([100, 100, 100, 100, 100]);
    const log = await api().get(`/api/v1/restservices/${svc.id}/deliveries`).query({ status: 'success', page_size: 1 }).set('Authorization', owner.token).expect(200);
    expect(log.headers['x-total-count']).toBe('500');

    // A new submission is appended; an edit rewrites its row; a delete clears it.
    const instance = randomUUID();
    await submit('sheet_form', { name: 'fresh', meta: { instanceID: `uuid:${instance}` } });
    await until('appended row', () => sheet.rows.length === 502);
    expect(sheet.rows[501][0]).toBe('fresh');
    const freshId = Number(sheet.rows[501][idCol]);
    await submit('sheet_form', { name: 'edited', meta: { instanceID: `uuid:${randomUUID()}`, deprecatedID: `uuid:${instance}` } });
    await until('rewritten row', () => sheet.rows[501][0] === 'edited');
    expect(sheet.rows).toHaveLength(502);
    expect(Number(sheet.rows[501][idCol])).toBe(freshId);
    expect(sheet.rows[501][header.indexOf('_edited')]).toBe('true');
    await api().delete(`/api/v1/data/${formId}/${existing[0]}`).set('Authorization', owner.token).expect(204);
    await until('cleared row', () => sheet.rows[1].length === 0);
    expect(sheet.rows).toHaveLength(502);
  });

  it('with a grant: create links at once (no authorization_url); PATCH send_existing_data: true pushes existing data', async () => {
    const formId = await newForm('sheet_patch');
    await submitMany('sheet_patch', 20);
    const created = await api().post('/api/v1/restservices').set('Authorization', owner.token)
      .send({ xform: formId, name: 'spreadsheet', spreadsheet_title: 'Later', send_existing_data: false }).expect(201);
    expect(created.body).not.toHaveProperty('authorization_url');
    expect(created.body).toMatchObject({ active: true, send_existing_data: false, sync_updates: true, spreadsheet_id: expect.any(String) });
    const sheet = await sheetOf(created.body.id);
    await new Promise((r) => setTimeout(r, 300));
    expect(sheet.rows).toHaveLength(1);

    expect(created.body.backfill_replay).toBeNull();
    const patched = await api().patch(`/api/v1/restservices/${created.body.id}`).set('Authorization', owner.token).send({ send_existing_data: true }).expect(200);
    expect(patched.body).toMatchObject({ send_existing_data: true, spreadsheet_id: created.body.spreadsheet_id, backfill_replay: expect.any(Number) });
    const progress = await followReplay(created.body.id, patched.body.backfill_replay, 20_000);
    expect(progress[progress.length - 1]).toMatchObject({ status: 'done', total: 20, done: 20, failed: 0 });
    expect(sheet.rows).toHaveLength(21);
    expect(sheet.rows.slice(1).map((r) => Number(r[sheet.rows[0].indexOf('_id')]))).toEqual(await ids(formId));
    // A second back-fill sends only what the sheet lacks: here nothing.
    const again = await api().patch(`/api/v1/restservices/${created.body.id}`).set('Authorization', owner.token).send({ send_existing_data: true }).expect(200);
    expect(again.body.backfill_replay).not.toBe(patched.body.backfill_replay);
    expect((await followReplay(created.body.id, again.body.backfill_replay)).pop()).toMatchObject({ status: 'done', total: 0 });
    expect(sheet.rows).toHaveLength(21);
  });

  it('a back-fill under way when the replay version is installed continues as a replay from its cursor (migration 1764840000001)', async () => {
    const formId = await newForm('sheet_legacy');
    await submitMany('sheet_legacy', 30);
    const created = await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'spreadsheet', spreadsheet_title: 'Legacy', send_existing_data: false }).expect(201);
    const sheet = await sheetOf(created.body.id);
    const existing = await ids(formId);
    // As the former back-fill job left a service it had not finished: pending, cursor after the 10th submission.
    const db = sut.app.get(DataSource);
    await db.query(`UPDATE rest_services SET options = options || jsonb_build_object('backfill_pending', true, 'backfill_cursor', $2::int) WHERE id = $1`, [created.body.id, existing[9]]);
    const runner = db.createQueryRunner();
    try {
      await new SheetsBackfillReplays1764840000001().up(runner);
    } finally {
      await runner.release();
    }
    const [{ options }] = (await db.query(`SELECT options FROM rest_services WHERE id = $1`, [created.body.id])) as Array<{ options: Record<string, unknown> }>;
    expect(options).not.toHaveProperty('backfill_pending');
    expect(options).not.toHaveProperty('backfill_cursor');
    const svc = (await api().get(`/api/v1/restservices/${created.body.id}`).set('Authorization', owner.token).expect(200)).body;
    expect(svc.backfill_replay).toEqual(expect.any(Number));
    // The worker's ReplayResumer picks it up: the 20 past the cursor, in _id order.
    expect((await followReplay(svc.id, svc.backfill_replay)).pop()).toMatchObject({ status: 'done', total: 20, done: 20, failed: 0 });
    expect(sheet.rows.slice(1).map((r) => Number(r[sheet.rows[0].indexOf('_id')]))).toEqual(existing.slice(10));
  });

  it("the provider's Retry-After holds back every write to the sheet: deliveries and the back-fill alike", async () => {
    const formId = await newForm('sheet_quota');
    await submitMany('sheet_quota', 5);
    const created = await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'spreadsheet', spreadsheet_title: 'Quota', send_existing_data: false }).expect(201);
    const sheet = await sheetOf(created.body.id);
    sheets.writes.length = 0;
    sheets.throttleWrites = 1;
    await submit('sheet_quota', { name: 'live' });
    await until('the throttled write and the one after it', () => sheets.writes.length >= 2, 20_000);
    const [refused, next] = sheets.writes;
    expect(refused.status).toBe(429);
    expect(next.status).toBe(200);
    expect(next.at - refused.at).toBeGreaterThanOrEqual(950);
    // The back-fill meets the quota too: it waits and resumes instead of failing.
    sheets.writes.length = 0;
    sheets.throttleWrites = 1;
    await api().patch(`/api/v1/restservices/${created.body.id}`).set('Authorization', owner.token).send({ send_existing_data: true }).expect(200);
    await until('the back-fill done', () => sheet.rows.length >= 7, 20_000);
    expect(sheets.writes[0].status).toBe(429);
    expect(sheets.writes[1].at - sheets.writes[0].at).toBeGreaterThanOrEqual(950);
  });

  it('a sheet the provider refuses to create answers 400 and stores no service', async () => {
    const formId = await newForm('sheet_down');
    sheets.failCreate = 503;
    try {
      const res = await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'spreadsheet', spreadsheet_title: 'Down' }).expect(400);
      expect(res.body.detail).toMatch(/refused to create the sheet \(503\)/);
    } finally {
      sheets.failCreate = null;
    }
    expect((await api().get('/api/v1/restservices').query({ xform: formId }).set('Authorization', owner.token).expect(200)).body).toEqual([]);
  });

  it('refuses spreadsheet services with bad fields', async () => {
    const formId = await newForm('sheet_bad');
    const res = await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'spreadsheet', send_existing_data: 'maybe' }).expect(400);
    expect(res.body).toEqual({ spreadsheet_title: ['This field is required.'], send_existing_data: ['Must be a boolean.'] });
  });
});
