import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ChangeNotifications } from '../src/database/change-notifications.js';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * A data page takes the form and the caller's role from FormCache, and its statement checks
 * both again (docs/data-api.md, "How it runs"): a cache that missed a change (the notifying
 * trigger disabled, so no process hears of it) still never shows a page the database refuses.
 */
describe('data page: cached form and role are checked again by the page statement', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let reader: TestUser;
  let formId: number;
  const idString = `page_cache_${process.pid}`;

  const page = (user: TestUser, query = '') => request(sut.url).get(`/api/v1/data/${formId}${query}`).set('Authorization', user.token);

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
    reader = await createTestUser(sut.app);
    const res = await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201);
    formId = res.body.formid;
    for (let i = 0; i < 3; i++) {
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission: { name: `n${i}`, 'meta/instanceID': `uuid:${randomUUID()}` } }).expect(201);
    }
    await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    await waitFor(() => sut.app.get(ChangeNotifications).live);
  });
  afterAll(async () => {
    await sut?.close();
  });

  it('a role removed behind the cache answers 404, not the page', async () => {
    const first = await page(reader, '?page_size=2').expect(200); // the reader's role is cached now
    expect(first.body.map((r: { name: string }) => r.name)).toEqual(['n0', 'n1']);
    expect(first.headers['x-total-count']).toBe('3');
    const ds = sut.app.get(DataSource);
    await ds.query('ALTER TABLE form_roles DISABLE TRIGGER form_roles_notify');
    try {
      await ds.query('DELETE FROM form_roles WHERE form_id = $1 AND user_id = $2', [formId, reader.id]);
      const res = await page(reader, '?page_size=2').expect(404);
      expect(res.body).not.toHaveProperty('length');
      await page(reader, '?page=5&page_size=2').expect(404);
    } finally {
      await ds.query('ALTER TABLE form_roles ENABLE TRIGGER form_roles_notify');
    }
    await request(sut.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    await waitForStatus(() => page(reader), 200);
  });

  it('a form deleted behind the cache answers 404 to everyone', async () => {
    await page(owner).expect(200);
    await page(reader).expect(200);
    const ds = sut.app.get(DataSource);
    await ds.query('ALTER TABLE forms DISABLE TRIGGER forms_notify');
    try {
      await ds.query('UPDATE forms SET deleted_at = now() WHERE id = $1', [formId]);
      await page(owner).expect(404);
      await page(reader).expect(404);
    } finally {
      await ds.query('UPDATE forms SET deleted_at = NULL WHERE id = $1', [formId]);
      await ds.query('ALTER TABLE forms ENABLE TRIGGER forms_notify');
    }
  });

  it('an empty page of a readable form is an empty array with its total, past the end a 404', async () => {
    const res = await page(reader, '?start=10&limit=5').expect(200);
    expect(res.body).toEqual([]);
    expect(res.headers['x-total-count']).toBe('3');
    await page(reader, '?page=3&page_size=2').expect(404);
  });
});

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function waitForStatus(send: () => PromiseLike<{ status: number }>, status: number, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while ((await send()).status !== status) {
    if (Date.now() > until) throw new Error(`no ${status} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
