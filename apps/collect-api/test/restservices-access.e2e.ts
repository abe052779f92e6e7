import request from 'supertest';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestBearerToken, createTestUser, type TestUser } from './test-users.js';

type Who = 'owner' | 'manager' | 'editor' | 'dataentry' | 'readonly' | 'stranger' | 'anonymous';
const WHO: Who[] = ['owner', 'manager', 'editor', 'dataentry', 'readonly', 'stranger', 'anonymous'];

/** Expected status per endpoint and caller (docs/api-conventions.md: read readonly, change editor, delete manager; unseen 404). */
const MATRIX: Record<string, Record<Who, number>> = {
  'GET list ?xform': { owner: 200, manager: 200, editor: 200, dataentry: 200, readonly: 200, stranger: 404, anonymous: 401 },
  'GET one': { owner: 200, manager: 200, editor: 200, dataentry: 200, readonly: 200, stranger: 404, anonymous: 401 },
  POST: { owner: 201, manager: 201, editor: 201, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401 },
  PATCH: { owner: 200, manager: 200, editor: 200, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401 },
  PUT: { owner: 200, manager: 200, editor: 200, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401 },
  DELETE: { owner: 204, manager: 204, editor: 403, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401 },
  'GET deliveries': { owner: 200, manager: 200, editor: 200, dataentry: 200, readonly: 200, stranger: 404, anonymous: 401 },
  'POST deliveries/{id}/retry': { owner: 202, manager: 202, editor: 202, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401 },
  'POST retry-failed': { owner: 202, manager: 202, editor: 202, dataentry: 403, readonly: 403, stranger: 404, anonymous: 401 },
};

describe('rest services: role matrix for every endpoint', () => {
  let sut: TestCollectApp;
  const users = {} as Record<Exclude<Who, 'anonymous'>, TestUser>;
  let formId: number;
  let n = 0;

  beforeAll(async () => {
    // The in-process worker turns deliveries to a closed port into failed ones (one attempt
    // allowed), which the retry endpoints need.
    sut = await startTestCollectApp({ FORWARD_MAX_ATTEMPTS: '1', FORWARD_TIMEOUT_MS: '500', FORWARD_RELAY_INTERVAL_MS: '50' }, { worker: true });
    for (const w of WHO) if (w !== 'anonymous') users[w] = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', users.owner.token).attach('xml_file', Buffer.from(demoXForm('roles_form')), 'form.xml').expect(201)).body.formid;
    for (const role of ['manager', 'editor', 'dataentry', 'readonly'] as const) {
      await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', users.owner.token).send({ username: users[role].username, role }).expect((r) => expect([200, 201, 204]).toContain(r.status));
    }
  });
  afterAll(() => sut.close());

  const auth = (req: request.Test, who: Who) => (who === 'anonymous' ? req : req.set('Authorization', users[who].token));
  const newService = async () =>
    (await request(sut.url).post('/api/v1/restservices').set('Authorization', users.owner.token).send({ xform: formId, name: 'generic_json', service_url: `http://127.0.0.1:9/s${++n}` }).expect(201)).body.id as number;

  /** A service with one failed delivery (connection refused, one attempt allowed); returns the log entry id. */
  const failedDelivery = async (): Promise<{ pk: number; entry: number }> => {
    const pk = await newService();
    await request(sut.url).post('/api/v1/submissions').set('Authorization', users.owner.token).send({ id: 'roles_form', submission: { name: `r${n}` } }).expect(201);
    for (let i = 0; i < 400; i++) {
      const log = (await request(sut.url).get(`/api/v1/restservices/${pk}/deliveries`).query({ status: 'failed' }).set('Authorization', users.owner.token)).body;
      if (log.length) return { pk, entry: log[0].id };
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('no failed delivery');
  };

  const call: Record<string, (who: Who) => Promise<request.Response>> = {
    'GET list ?xform': async (who) => auth(request(sut.url).get('/api/v1/restservices').query({ xform: formId }), who),
    'GET one': async (who) => auth(request(sut.url).get(`/api/v1/restservices/${await newService()}`), who),
    POST: async (who) => auth(request(sut.url).post('/api/v1/restservices').send({ xform: formId, name: 'generic_json', service_url: `http://127.0.0.1:9/p${++n}` }), who),
    PATCH: async (who) => auth(request(sut.url).patch(`/api/v1/restservices/${await newService()}`).send({ service_url: `http://127.0.0.1:9/q${++n}` }), who),
    PUT: async (who) => auth(request(sut.url).put(`/api/v1/restservices/${await newService()}`).send({ xform: formId, name: 'generic_xml', service_url: `http://127.0.0.1:9/u${++n}` }), who),
    DELETE: async (who) => auth(request(sut.url).delete(`/api/v1/restservices/${await newService()}`), who),
    'GET deliveries': async (who) => auth(request(sut.url).get(`/api/v1/restservices/${await newService()}/deliveries`), who),
    'POST deliveries/{id}/retry': async (who) => {
      const { pk, entry } = await failedDelivery();
      return auth(request(sut.url).post(`/api/v1/restservices/${pk}/deliveries/${entry}/retry`), who);
    },
    'POST retry-failed': async (who) => auth(request(sut.url).post(`/api/v1/restservices/${await newService()}/retry-failed`), who),
  };

  for (const [endpoint, expected] of Object.entries(MATRIX)) {
    it(`${endpoint}: ${WHO.map((w) => `${w} ${expected[w]}`).join(', ')}`, async () => {
      const got: Record<string, number> = {};
      for (const who of WHO) got[who] = (await call[endpoint](who)).status;
      expect(got).toEqual(expected);
    });
  }

  it('the unfiltered list shows services of every visible form and none of others', async () => {
    const pk = await newService();
    const other = (await request(sut.url).post('/api/v1/forms').set('Authorization', users.stranger.token).attach('xml_file', Buffer.from(demoXForm('strangers_form')), 'form.xml').expect(201)).body.formid;
    const theirs = (await request(sut.url).post('/api/v1/restservices').set('Authorization', users.stranger.token).send({ xform: other, name: 'generic_json', service_url: 'http://127.0.0.1:9/theirs' }).expect(201)).body.id;
    const readonlyList = (await request(sut.url).get('/api/v1/restservices').set('Authorization', users.readonly.token).expect(200)).body.map((s: { id: number }) => s.id);
    expect(readonlyList).toContain(pk);
    expect(readonlyList).not.toContain(theirs);
    const strangerList = (await request(sut.url).get('/api/v1/restservices').set('Authorization', users.stranger.token).expect(200)).body.map((s: { id: number }) => s.id);
    expect(strangerList).toEqual([theirs]);
    // A stranger cannot attach a service to a form it cannot see, nor move one there.
    await request(sut.url).patch(`/api/v1/restservices/${theirs}`).set('Authorization', users.stranger.token).send({ xform: formId }).expect(404);
    await request(sut.url).post('/api/v1/restservices').set('Authorization', users.stranger.token).send({ xform: formId, name: 'generic_json', service_url: 'http://127.0.0.1:9/x' }).expect(404);
  });

  it('the messaging auth_token reads in clear on create and for editors and above; masked for lower roles and Bearer callers', async () => {
    const secret = 'flow-api-token-0123456789';
    const created = await request(sut.url).post('/api/v1/restservices').set('Authorization', users.editor.token)
      .send({ xform: formId, name: 'messaging', service_url: `http://127.0.0.1:9/m${++n}`, auth_token: secret, flow_uuid: 'f-1', contacts: 'a' }).expect(201);
    expect(created.body.auth_token).toBe(secret);
    const pk = created.body.id as number;
    const seen = async (header: string) => {
      const one = (await request(sut.url).get(`/api/v1/restservices/${pk}`).set('Authorization', header).expect(200)).body.auth_token;
      const listed = (await request(sut.url).get('/api/v1/restservices').query({ xform: formId }).set('Authorization', header).expect(200)).body.find((s: { id: number }) => s.id === pk).auth_token;
      expect(listed).toBe(one);
      return one;
    };
    for (const who of ['owner', 'manager', 'editor'] as const) expect(await seen(users[who].token)).toBe(secret);
    for (const who of ['dataentry', 'readonly'] as const) expect(await seen(users[who].token)).toBe('********');
    expect(await seen(await createTestBearerToken(sut.app, users.owner))).toBe('********');
    // A body read back masked and sent again keeps the stored secret.
    const masked = (await request(sut.url).get(`/api/v1/restservices/${pk}`).set('Authorization', users.readonly.token).expect(200)).body;
    const put = await request(sut.url).put(`/api/v1/restservices/${pk}`).set('Authorization', users.editor.token).send({ ...masked, contacts: 'b' }).expect(200);
    expect(put.body.auth_token).toBe(secret);
  });
});
