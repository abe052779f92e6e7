import fc from 'fast-check';
import request from 'supertest';
import {
  fuzzSettings, fuzzSummary, fuzzTarget, formBodies, jsonBodies, multipartBodies, mutatedObject, nastyString, pathSegment, queryStrings, RowCounter,
  wrongContentTypes, type FuzzOutcome, type FuzzRequest, type FuzzTarget,
} from '@collect/testing';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoInstance, demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Property: every write endpoint answers any body with 2xx or 4xx in the decisions.md shape
 * (OAuth: RFC 6749), within the deadline, and a refusal leaves the counted tables unchanged.
 * Seeded (FUZZ_SEED); `pnpm fuzz` runs more cases (FUZZ_RUNS) with a random seed.
 *
 * To cover a new endpoint, add one row to `targets()`.
 */
const settings = fuzzSettings(100);

const body = (a: fc.Arbitrary<FuzzRequest['body']>): fc.Arbitrary<FuzzRequest> => a.map((b) => ({ body: b }));
const SIMPLE_FORM = { id_string: 'fuzzform', title: 'Fuzz', fields: [{ name: 'q', type: 'text', label: 'Q' }, { name: 'g', type: 'group', label: 'G', children: [{ name: 'n', type: 'integer' }] }] };

describe('hardening: fuzzing collect-api write endpoints', () => {
  let sut: TestCollectApp;
  let rows: RowCounter;
  let owner: TestUser;
  let other: TestUser;
  let formId: number;
  let dataviewId: number;
  let client: { client_id: string; client_secret: string };
  const outcomes: FuzzOutcome[] = [];

  // Temporary upload files (<tmpdir>/collect-uploads) must be gone once a request is answered.
  // Other suites may upload in parallel: a file counts as left behind when it appeared during
  // the request and is still there a second later.
  const uploads = join(tmpdir(), 'collect-uploads');
  const list = () => (existsSync(uploads) ? readdirSync(uploads) : []);
  let known = new Set<string>();
  const leftovers = (): string[] => {
    let fresh = list().filter((f) => !known.has(f));
    const until = Date.now() + 1_000;
    while (fresh.length && Date.now() < until) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      const now = new Set(list());
      fresh = fresh.filter((f) => now.has(f));
    }
    known = new Set(list().filter((f) => !fresh.includes(f)));
    return fresh;
  };

  beforeAll(async () => {
    known = new Set(list());
    // Rate limits are tested in hardening-limits.e2e.ts; here every case must reach the handler.
    sut = await startTestCollectApp({
      AUTH_TOKEN_CACHE_TTL_MS: '0', SUBMISSION_XML_MAX_BYTES: '65536', FORM_MAX_BYTES: '65536',
      RATE_LIMIT_TOKEN_PER_IP: '1000000', RATE_LIMIT_TOKEN_PER_CLIENT: '1000000', RATE_LIMIT_LOGIN_PER_IP: '1000000', RATE_LIMIT_LOGIN_PER_USERNAME: '1000000',
    });
    rows = new RowCounter(sut.config.DATABASE_URL);
    owner = await createTestUser(sut.app);
    other = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send(SIMPLE_FORM).expect(201)).body.formid;
    await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm()).expect(201);
    dataviewId = (await request(sut.url).post('/api/v1/dataviews').set('Authorization', owner.token).send({ name: 'v', xform: formId, columns: ['q'], query: [] }).expect(201)).body.dataviewid;
    const app = await request(sut.url).post('/api/v1/oauth-applications').set('Authorization', owner.token).send({ name: 'fuzz', client_type: 'confidential', redirect_uris: 'https://c.example/cb' }).expect(201);
    client = { client_id: app.body.client_id, client_secret: app.body.client_secret };
  });
  afterAll(async () => {
    await rows?.close();
    await sut?.close();
  });

  function targets(): FuzzTarget[] {
    const auth = { Authorization: owner.token };
    const basicClient = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
    const submission = mutatedObject({ id: 'fuzzform', submission: { q: 'a', g: { n: 1 } } }, { submission: fc.oneof(fc.dictionary(nastyString(), nastyString()), fc.constant({ meta: { instanceID: 'uuid:x', deprecatedID: 'uuid:y' } })) });
    const instance = fc.record({ id: fc.uuid(), name: nastyString().map((s) => s.replace(/[<&]/g, '')) }).map(({ id, name }) => demoInstance({ instanceId: id, name }));
    return [
      { name: 'POST /api/v1/profiles', method: 'POST', path: '/api/v1/profiles', answers: 'drf', tables: ['users', 'api_tokens'],
        input: body(jsonBodies(mutatedObject({ username: 'fuzzuser', password: 'long-enough-password', email: 'f@example.org', first_name: 'F', country: 'KE', website: 'https://x.example', require_auth: false }))) },
      { name: 'POST /api/v1/oauth-applications', method: 'POST', path: '/api/v1/oauth-applications', headers: auth, answers: 'drf', tables: ['oauth_applications'],
        input: body(jsonBodies(mutatedObject({ name: 'app', client_type: 'public', authorization_grant_type: 'authorization-code', redirect_uris: 'https://a.example/cb https://b.example/cb' }))) },
      { name: 'POST /o/token', method: 'POST', path: '/o/token', headers: { Authorization: basicClient }, answers: 'oauth', tables: ['oauth_tokens', 'oauth_grants'],
        input: body(formBodies({ grant_type: fc.constantFrom('authorization_code', 'refresh_token', 'password', 'client_credentials', ''), code: nastyString(), refresh_token: nastyString(), redirect_uri: fc.constantFrom('https://c.example/cb', 'x'), code_verifier: nastyString(), client_id: fc.constant(client.client_id), client_secret: nastyString() })) },
      { name: 'POST /o/token (fuzzed client auth)', method: 'POST', path: '/o/token', answers: 'oauth', tables: ['oauth_tokens'], weight: 0.5,
        input: fc.record({ body: formBodies({ grant_type: fc.constant('refresh_token'), refresh_token: nastyString() }), headers: fc.record({ Authorization: fc.oneof(nastyString().map((s) => `Basic ${Buffer.from(s.slice(0, 4000)).toString('base64')}`), nastyString().map((s) => `Basic ${s.replace(/[^\x20-\x7e]/g, '').slice(0, 2000)}`), fc.constant('Basic ' + Buffer.from(`${client.client_id}:`).toString('base64')), fc.constant('Bearer x')) }) }) },
      { name: 'POST /o/login', method: 'POST', path: '/o/login', answers: 'html', tables: ['users'], weight: 0.5,
        input: body(formBodies({ username: fc.constant(owner.username), password: nastyString(), csrf_token: nastyString(), next: fc.constantFrom(`/o/authorize?client_id=${client.client_id}&response_type=code`, '/o/authorize?', 'https://evil.example/') })) },
      { name: 'POST /o/authorize', method: 'POST', path: '/o/authorize', answers: 'html', tables: ['oauth_grants'], weight: 0.5,
        input: body(formBodies({ client_id: fc.constant(client.client_id), response_type: fc.constantFrom('code', 'token', ''), scope: nastyString(), decision: fc.constantFrom('allow', 'deny'), csrf_token: nastyString(), redirect_uri: nastyString(), code_challenge: nastyString(), code_challenge_method: fc.constantFrom('S256', 'plain', '') })) },
      { name: 'POST /api/v1/forms (json)', method: 'POST', path: '/api/v1/forms', headers: auth, answers: 'drf', tables: ['forms', 'form_roles'],
        input: body(jsonBodies(mutatedObject({ ...SIMPLE_FORM, id_string: 'fuzz2' }, { fields: fc.array(mutatedObject({ name: 'q', type: 'text', label: 'Q', children: [] }), { maxLength: 4 }) }))) },
      { name: 'POST /api/v1/forms (xml, multipart)', method: 'POST', path: '/api/v1/forms', headers: auth, answers: 'drf', tables: ['forms', 'form_roles'],
        input: body(fc.oneof(multipartBodies('xml_file', fc.constant(demoXForm('fuzz_xml'))), wrongContentTypes().map((b) => (b.kind === 'raw' ? { ...b, contentType: 'application/xml' } : b)))) },
      { name: 'PATCH /api/v1/forms/:pk', method: 'PATCH', path: () => `/api/v1/forms/${formId}`, headers: auth, answers: 'drf', tables: ['forms'], weight: 0.5,
        input: body(jsonBodies(mutatedObject({ title: 'T', downloadable: true }))) },
      { name: 'PUT /api/v1/forms/:pk/share', method: 'PUT', path: () => `/api/v1/forms/${formId}/share`, headers: auth, answers: 'drf', tables: ['form_roles'],
        input: body(jsonBodies(mutatedObject({ username: other.username, role: 'readonly', remove: false }, { role: fc.constantFrom('owner', 'manager', 'editor', 'dataentry', 'readonly', 'admin') }))) },
      { name: 'POST /api/v1/submissions (json)', method: 'POST', path: '/api/v1/submissions', headers: auth, answers: 'drf', tables: ['submissions', 'attachments'],
        input: body(jsonBodies(submission)) },
      { name: 'POST /api/v1/submissions (OpenRosa)', method: 'POST', path: '/api/v1/submissions', headers: auth, answers: 'drf', tables: ['submissions', 'attachments'],
        input: body(multipartBodies('xml_submission_file', instance)) },
      { name: 'POST /submission (OpenRosa)', method: 'POST', path: '/submission', headers: { ...auth, 'X-OpenRosa-Version': '1.0' }, answers: 'drf', tables: ['submissions', 'attachments'],
        input: body(multipartBodies('xml_submission_file', instance)) },
      { name: 'POST /api/v1/merged-datasets', method: 'POST', path: '/api/v1/merged-datasets', headers: auth, answers: 'drf', tables: ['merged_datasets'],
        input: body(jsonBodies(mutatedObject({ name: 'm', xforms: [formId, formId + 1], project: 'p' }, { xforms: fc.array(fc.oneof(fc.integer(), nastyString()), { maxLength: 5 }) }))) },
      { name: 'POST /api/v1/dataviews', method: 'POST', path: '/api/v1/dataviews', headers: auth, answers: 'drf', tables: ['dataviews'],
        input: body(jsonBodies(mutatedObject({ name: 'v', xform: formId, columns: ['q', 'g/n'], query: [{ column: 'q', filter: '=', value: 'a' }] }, { query: fc.array(mutatedObject({ column: 'g/n', filter: '>=', value: '3', condition: 'or' }), { maxLength: 3 }), columns: fc.array(nastyString(), { maxLength: 3 }) }))) },
      { name: 'PATCH /api/v1/dataviews/:pk', method: 'PATCH', path: () => `/api/v1/dataviews/${dataviewId}`, headers: auth, answers: 'drf', tables: ['dataviews'], weight: 0.5,
        input: body(jsonBodies(mutatedObject({ name: 'v2', columns: ['q'], query: [{ column: 'q', filter: '<>', value: '1' }] }))) },
      { name: 'GET /api/v1/user (fuzzed credentials)', method: 'GET', path: '/api/v1/user', answers: 'drf', tables: ['temp_tokens'], weight: 0.5,
        input: fc.tuple(fc.constantFrom('Basic', 'Token', 'TempToken', 'Bearer', 'basic', 'Digest', ''), nastyString(), fc.boolean()).map(([scheme, s, encode]) => ({
          body: { kind: 'none' as const },
          headers: { Authorization: `${scheme} ${encode ? Buffer.from(s.slice(0, 4000)).toString('base64') : s.replace(/[^\x20-\x7e]/g, '').slice(0, 4000)}` },
        })) },
      { name: 'GET /api/v1/data/:pk/:id (path)', method: 'GET', path: '/api/v1/data/1/1', headers: auth, answers: 'drf', weight: 0.3,
        input: fc.tuple(pathSegment(), pathSegment()).map(([a, b]) => ({ body: { kind: 'none' as const }, path: `/api/v1/data/${a}/${b}` })) },
      { name: 'GET /api/v1/data/:pk (query)', method: 'GET', path: () => `/api/v1/data/${formId}`, headers: auth, answers: 'drf', weight: 0.5,
        input: queryStrings({ page: fc.nat().map(String), page_size: fc.nat().map(String), query: nastyString(), sort: nastyString(), start: nastyString(), limit: nastyString(), fields: nastyString() }).map((query) => ({ body: { kind: 'none' as const }, query })) },
      { name: 'GET /api/v1/dataviews/:pk/data (query)', method: 'GET', path: () => `/api/v1/dataviews/${dataviewId}/data`, headers: auth, answers: 'drf', weight: 0.3,
        input: queryStrings({ page: fc.nat().map(String), page_size: fc.nat().map(String), count: fc.constantFrom('true', 'x') }).map((query) => ({ body: { kind: 'none' as const }, query })) },
    ];
  }

  it('answers every generated request with 2xx/4xx in the documented shape, in time, with nothing partial stored', async () => {
    for (const target of targets()) outcomes.push(await fuzzTarget(target, { baseUrl: sut.url, settings, rows, leftovers }));
    console.log(fuzzSummary('collect-api', settings, outcomes));
    expect(outcomes.reduce((n, o) => n + o.cases, 0)).toBeGreaterThan(0);
  });
});
