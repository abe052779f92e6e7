import { randomUUID } from 'node:crypto';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { demoXForm } from './forms-fixtures.js';
import { startReplica, startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

type Row = Record<string, unknown>;

/**
 * Plain data pages are kept per process (DataPageCache) and served only after the database says
 * nothing the page shows changed since the page's snapshot (docs/data-api.md, "How it runs"):
 * two replicas on one database, every kind of change made on the other one or by hand in SQL,
 * is seen on the very next read; a transaction in progress while a page was built is seen once
 * it commits.
 */
describe('kept data pages across replicas', () => {
  let a: TestCollectApp;
  let b: NestExpressApplication;
  let bUrl: string;
  let owner: TestUser;
  let reader: TestUser;
  let db: DataSource;
  let formId: number;
  const idString = `kept_${process.pid}`;

  const submit = (url: string, name: string, extra: Record<string, string> = {}) =>
    request(url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: idString, submission: { name, 'meta/instanceID': `uuid:${randomUUID()}`, ...extra } });
  const page = async (url: string, user: TestUser = reader, status = 200) => {
    const res = await request(url).get(`/api/v1/data/${formId}?page_size=50`).set('Authorization', user.token).expect(status);
    return { rows: res.body as Row[], total: Number(res.headers['x-total-count']) };
  };
  const names = (rows: Row[]) => rows.map((r) => r.name);
  /** The page as both replicas show it, read twice each (the second read of each is a kept page when nothing changed). */
  const both = async () => {
    const first = await page(a.url);
    for (const seen of [await page(a.url), await page(bUrl), await page(bUrl)]) expect(seen).toEqual(first);
    return first;
  };

  beforeAll(async () => {
    a = await startTestCollectApp();
    ({ app: b, url: bUrl } = await startReplica(a));
    db = a.app.get(DataSource);
    owner = await createTestUser(a.app);
    reader = await createTestUser(a.app);
    const res = await request(a.url).post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201);
    formId = res.body.formid;
    await request(a.url).put(`/api/v1/forms/${formId}/share`).set('Authorization', owner.token).send({ username: reader.username, role: 'readonly' }).expect(204);
    for (let i = 0; i < 3; i++) await submit(a.url, `n${i}`).expect(201);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('serves a kept page while no change row says otherwise (a change hidden from the triggers stays unseen)', async () => {
    const before = await both();
    expect(names(before.rows)).toEqual(['n0', 'n1', 'n2']);
    // Behind the change triggers: the kept page is served as it was; proof that it is kept.
    await db.query('ALTER TABLE submissions DISABLE TRIGGER submissions_count_update');
    try {
      await db.query(`UPDATE submissions SET json = jsonb_set(json, '{name}', '"hidden"') WHERE form_id = $1 AND json->>'name' = 'n0'`, [formId]);
    } finally {
      await db.query('ALTER TABLE submissions ENABLE TRIGGER submissions_count_update');
    }
    expect(names((await page(a.url)).rows)).toEqual(['n0', 'n1', 'n2']);
    // Any change the triggers see brings the page up to date, on both replicas.
    await db.query(`UPDATE submissions SET bamboo_dataset_id = 'b' WHERE form_id = $1 AND json->>'name' = 'n1'`, [formId]);
    const after = await both();
    expect(names(after.rows)).toEqual(['hidden', 'n1', 'n2']);
    expect(after.rows[1]!._bamboo_dataset_id).toBe('b');
  });

  it('intake, soft delete and an edit on one replica are on the other at once', async () => {
    await both();
    await submit(bUrl, 'from b').expect(201);
    let seen = await page(a.url);
    expect(names(seen.rows)).toContain('from b');
    expect(seen.total).toBe(4);
    const target = seen.rows.find((r) => r.name === 'from b')!;
    await request(a.url).delete(`/api/v1/data/${formId}/${target._id}`).set('Authorization', owner.token).expect(204);
    seen = await page(bUrl);
    expect(names(seen.rows)).not.toContain('from b');
    expect(seen.total).toBe(3);
    const n2 = seen.rows.find((r) => r.name === 'n2')!;
    await submit(bUrl, 'n2 edited', { 'meta/deprecatedID': `uuid:${String(n2._uuid)}` }).expect(201);
    expect(names((await page(a.url)).rows)).toContain('n2 edited');
    await both();
  });

  it('attachments, the form row and usernames written in SQL are seen at once', async () => {
    const { rows } = await both();
    const first = rows[0]!;
    expect(first._attachments).toEqual([]);
    await db.query(
      `INSERT INTO attachments (submission_id, form_id, filename, name, mimetype, size) VALUES ($1, $2, $3, 'photo.jpg', 'image/jpeg', 10)`,
      [first._id, formId, `kept/${randomUUID()}/photo.jpg`],
    );
    const withFile = (await page(bUrl)).rows[0]!;
    expect((withFile._attachments as Row[]).map((x) => x.name)).toEqual(['photo.jpg']);
    await page(a.url);
    await db.query(`UPDATE attachments SET deleted_at = now() WHERE submission_id = $1`, [first._id]);
    expect((await page(a.url)).rows[0]!._attachments).toEqual([]);

    await both();
    const uuid = randomUUID();
    await db.query('UPDATE forms SET uuid = $2 WHERE id = $1', [formId, uuid]);
    expect((await page(bUrl)).rows[0]!['formhub/uuid']).toBe(uuid.replace(/-/g, ''));

    await both();
    const renamed = `${owner.username}_r`;
    await db.query('UPDATE users SET username = $2 WHERE id = $1', [owner.id, renamed]);
    expect((await page(a.url)).rows[0]!._submitted_by).toBe(renamed);
    await db.query('UPDATE users SET username = $2 WHERE id = $1', [owner.id, owner.username]);
    expect((await page(bUrl)).rows[0]!._submitted_by).toBe(owner.username);
  });

  it('a transaction in progress while the page was built is seen once it commits', async () => {
    const { total } = await both();
    const writer = db.createQueryRunner();
    await writer.connect();
    try {
      await writer.startTransaction();
      await writer.query(
        `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id, version) VALUES ($1, $2, '{"name": "late"}', '', '', $3, '')`,
        [formId, randomUUID(), owner.id],
      );
      // Built (and kept) while the insert is in progress: it does not see it.
      for (const url of [a.url, bUrl]) expect(names((await page(url)).rows)).not.toContain('late');
      await writer.commitTransaction();
    } finally {
      await writer.release();
    }
    for (const url of [a.url, bUrl]) {
      const seen = await page(url);
      expect(names(seen.rows)).toContain('late');
      expect(seen.total).toBe(total + 1);
    }
  });

  it('a kept page has an ETag; If-None-Match answers 304 while it is current, on either replica, and never past a change or a refused role', async () => {
    const get = (url: string, user: TestUser, etag?: string, query = '?page_size=50') => {
      const r = request(url).get(`/api/v1/data/${formId}${query}`).set('Authorization', user.token);
      return etag ? r.set('If-None-Match', etag) : r;
    };
    const first = await get(a.url, reader).expect(200);
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(Number(first.headers['content-length'])).toBe(Buffer.byteLength(first.text));
    // The same page on the other replica has the same tag (a hash of the body and total).
    expect((await get(bUrl, reader).expect(200)).headers.etag).toBe(etag);
    for (const url of [a.url, bUrl]) {
      const res = await get(url, reader, etag).expect(304);
      expect(res.text).toBe('');
      expect(res.headers.etag).toBe(etag);
      expect(res.headers['x-total-count']).toBe(first.headers['x-total-count']);
    }
    await get(a.url, reader, '"other"').expect(200);
    // A filtered page is not kept: no tag, always the body.
    const filtered = await get(a.url, reader, etag, `?page_size=50&query=${encodeURIComponent('{"name": "n1"}')}`).expect(200);
    expect(filtered.headers.etag).toBeUndefined();
    // A change anywhere: the old tag gets the new body.
    await submit(bUrl, 'changes the tag').expect(201);
    const changed = await get(a.url, reader, etag).expect(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(names(changed.body as Row[])).toContain('changes the tag');
    // A user without a role presenting a current tag gets 404, not 304.
    const stranger = await createTestUser(a.app);
    await get(a.url, stranger, changed.headers.etag as string).expect(404);
  });

  it('a role taken away is refused at once by a replica that kept the page, the form deleted too', async () => {
    await both();
    await db.query('ALTER TABLE form_roles DISABLE TRIGGER form_roles_notify');
    try {
      await db.query('DELETE FROM form_roles WHERE form_id = $1 AND user_id = $2', [formId, reader.id]);
      for (const url of [a.url, bUrl]) expect((await page(url, reader, 404)).rows).not.toHaveProperty('length');
    } finally {
      await db.query('ALTER TABLE form_roles ENABLE TRIGGER form_roles_notify');
    }
    await page(a.url, owner);
    await page(bUrl, owner);
    await db.query('ALTER TABLE forms DISABLE TRIGGER forms_notify');
    try {
      await db.query('UPDATE forms SET deleted_at = now() WHERE id = $1', [formId]);
      for (const url of [a.url, bUrl]) await page(url, owner, 404);
    } finally {
      await db.query('ALTER TABLE forms ENABLE TRIGGER forms_notify');
    }
  });
});
