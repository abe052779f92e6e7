import request from 'supertest';
import { createMediaFixture, type MediaFixture } from './media-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestBearerToken, createTestUser } from './test-users.js';

/**
 * Roles × media endpoints: every role on the form (readonly and above) sees its media; a
 * stranger gets 404 (never 403: existence is not leaked); anonymous gets 401.
 */
describe('media permission matrix', () => {
  let sut: TestCollectApp;
  let fx: MediaFixture;
  const callers: Record<string, string | null> = {};
  let imageId: number;
  let imagePath: string;

  beforeAll(async () => {
    sut = await startTestCollectApp();
    fx = await createMediaFixture(sut);
    callers.owner = fx.owner.token;
    for (const role of ['manager', 'editor', 'dataentry', 'readonly']) {
      const u = await createTestUser(sut.app);
      await request(sut.url).put(`/api/v1/forms/${fx.formA}/share`).set('Authorization', fx.owner.token).send({ username: u.username, role }).expect(204);
      // Different schemes on purpose: the role decides, not the scheme.
      callers[role] = role === 'readonly' ? await createTestBearerToken(sut.app, u, 'read') : u.basic;
    }
    callers.stranger = (await createTestUser(sut.app)).token;
    callers.anonymous = null;
    const item = (await request(sut.url).get(`/api/v1/media?instance=${fx.sub.s1}&type=image`).set('Authorization', fx.owner.token).expect(200)).body[0];
    imageId = item.id;
    imagePath = item.filename;
  });
  afterAll(() => sut.close());

  const call = (who: string, path: string) => {
    const r = request(sut.url).get(path);
    return callers[who] ? r.set('Authorization', callers[who]!) : r;
  };

  const seeing = ['owner', 'manager', 'editor', 'dataentry', 'readonly'];

  it.each(seeing)('%s: list, detail, download, variant, /files and count', async (who) => {
    const list = await call(who, `/api/v1/media?xform=${fx.formA}`).expect(200);
    expect(list.body).toHaveLength(6);
    expect((await call(who, `/api/v1/media/count?xform=${fx.formA}`).expect(200)).body).toEqual({ count: 6 });
    // Without filters: only form A is shared with them (the owner also sees form B).
    expect((await call(who, '/api/v1/media').expect(200)).body).toHaveLength(who === 'owner' ? 8 : 6);
    expect((await call(who, `/api/v1/media/${imageId}`).expect(200)).body.id).toBe(imageId);
    const bytes = await call(who, `/api/v1/media/${imageId}.jpg`).expect(200);
    expect(bytes.headers['content-type']).toBe('image/jpeg');
    await call(who, `/api/v1/media/${imageId}-small.jpg`).expect(200);
    await call(who, `/api/v1/files/${imageId}?filename=${encodeURIComponent(imagePath)}`).expect(200);
  });

  it('stranger: 404 everywhere a form is named, an empty unfiltered list, never 403', async () => {
    const notFound = { detail: 'Not found.' };
    expect((await call('stranger', `/api/v1/media?xform=${fx.formA}`).expect(404)).body).toEqual(notFound);
    expect((await call('stranger', `/api/v1/media?instance=${fx.sub.s1}`).expect(404)).body).toEqual(notFound);
    expect((await call('stranger', `/api/v1/media?merged_xform=${fx.merged}`).expect(404)).body).toEqual(notFound);
    expect((await call('stranger', `/api/v1/media?dataview=${fx.dataview}`).expect(404)).body).toEqual(notFound);
    expect((await call('stranger', `/api/v1/media/count?xform=${fx.formA}`).expect(404)).body).toEqual(notFound);
    expect((await call('stranger', '/api/v1/media').expect(200)).body).toEqual([]);
    expect((await call('stranger', '/api/v1/media/count').expect(200)).body).toEqual({ count: 0 });
    expect((await call('stranger', `/api/v1/media/${imageId}`).expect(404)).body).toEqual(notFound);
    await call('stranger', `/api/v1/media/${imageId}.jpg`).expect(404);
    await call('stranger', `/api/v1/media/${imageId}`).set('Accept', 'image/jpeg').expect(404);
    await call('stranger', `/api/v1/media/${imageId}-small.jpg`).expect(404);
    await call('stranger', `/api/v1/files/${imageId}?filename=${encodeURIComponent(imagePath)}`).expect(404);
  });

  it('a role on form A does not open form B or the merged dataset of A and B', async () => {
    await call('readonly', `/api/v1/media?xform=${fx.formB}`).expect(404);
    await call('readonly', `/api/v1/media?merged_xform=${fx.merged}`).expect(404);
    expect((await call('readonly', `/api/v1/media?dataview=${fx.dataview}`).expect(200)).body).toHaveLength(2);
  });

  it('anonymous: 401 with WWW-Authenticate on list, detail, download, /files and count', async () => {
    for (const path of [
      '/api/v1/media', '/api/v1/media.json', `/api/v1/media?xform=${fx.formA}`, `/api/v1/media/count?xform=${fx.formA}`, `/api/v1/media/${imageId}`,
      `/api/v1/media/${imageId}.jpg`, `/api/v1/media/${imageId}-small.jpg`, `/api/v1/files/${imageId}?filename=${encodeURIComponent(imagePath)}`,
    ]) {
      const res = await call('anonymous', path).expect(401);
      expect(res.headers['www-authenticate']).toBeDefined();
    }
  });
});
