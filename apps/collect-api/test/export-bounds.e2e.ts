import { jest } from '@jest/globals';
import pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';
import { eventually, slowReader, watcher } from './slow-readers.js';

/**
 * The work of an export's plan (docs/exports.md, "Split select-multiples"): the values of every
 * split question come from one statement, the choice columns are capped, the values are split
 * on whitespace, and a client that leaves cancels the plan's running statement.
 */
describe('exports: bounded planning work', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let db: pg.Client;
  const QUESTIONS = 6;
  const CAP = 12;
  const api = () => request(sut.url);

  /** A form of QUESTIONS select-multiples `m1`..`m6` and `rows` submissions answering each with `answer(i, q)`. */
  async function splitForm(idString: string, rows: number, answer: (i: number, q: number) => string): Promise<number> {
    const fields = Array.from({ length: QUESTIONS }, (_, q) => ({ name: `m${q + 1}`, type: 'select all that apply' }));
    const formId = (await api().post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: idString, fields }).expect(201)).body.formid as number;
    for (let i = 0; i < rows; i++) {
      const json = Object.fromEntries(fields.map((f, q) => [f.name, answer(i, q)]));
      await sut.app.get(DataSource).query(
        `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id) VALUES ($1, $2::text, $3::jsonb, '<data/>', md5($2::text) || md5($2::text), $4)`,
        [formId, `${idString}-${i}`, JSON.stringify(json), owner.id],
      );
    }
    return formId;
  }

  beforeAll(async () => {
    sut = await startTestCollectApp({ EXPORT_MAX_SPLIT_COLUMNS: String(CAP) });
    owner = await createTestUser(sut.app);
    db = await watcher(sut.config.DATABASE_URL);
  });
  afterAll(async () => {
    await db?.end();
    await sut?.close();
  });

  it('the values of six split questions come from one statement, split on whitespace (values with an "s" stay whole)', async () => {
    const formId = await splitForm('split_six', 4, (i, q) => (q === 0 ? ['yes sometimes', 'sometimes', 'yes', 'less'][i]! : 'x'));
    const statements: string[] = [];
    const spy = jest.spyOn(pg.Client.prototype, 'query');
    let csv: string;
    try {
      csv = (await api().get(`/api/v1/data/${formId}.csv?split_select_multiples=true`).set('Authorization', owner.token).buffer(true).expect(200)).text;
      for (const [q] of spy.mock.calls) {
        const text = typeof q === 'string' ? q : (q as { text?: string } | undefined)?.text;
        if (text?.includes('regexp_split_to_table')) statements.push(text);
      }
    } finally {
      spy.mockRestore();
    }
    expect(statements).toHaveLength(1);
    const header = csv.split('\n')[0]!.split(',');
    expect(header.filter((h) => h.startsWith('m1/'))).toEqual(['m1/less', 'm1/sometimes', 'm1/yes']);
    for (let q = 2; q <= QUESTIONS; q++) expect(header.filter((h) => h.startsWith(`m${q}/`))).toEqual([`m${q}/x`]);
  });

  it('more choice columns than EXPORT_MAX_SPLIT_COLUMNS: 422 naming the variable, before any byte of the file', async () => {
    // Three values per question: 18 columns in all, past the cap of 12 (each question alone is within it).
    const formId = await splitForm('split_many', 3, (i) => `v${i}`);
    const res = await api().get(`/api/v1/data/${formId}.csv?split_select_multiples=true`).set('Authorization', owner.token).expect(422);
    expect(res.body.detail).toContain('EXPORT_MAX_SPLIT_COLUMNS');
    await api().get(`/api/v1/data/${formId}.csv`).set('Authorization', owner.token).expect(200);
  });

  it('a client that leaves while the plan waits: its statement is cancelled', async () => {
    const formId = await splitForm('split_cancel', 2, () => 'a b');
    const waiting = async () => (await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'`,
    )).rows[0]!.n;
    await db.query('BEGIN');
    try {
      // The plan's scans wait behind this lock until the test lets go of it.
      await db.query('LOCK TABLE submissions, submission_count_deltas IN ACCESS EXCLUSIVE MODE');
      const reader = slowReader(sut.url, `/api/v1/data/${formId}.csv?split_select_multiples=true`, owner.token);
      expect(await eventually(waiting, (n) => n === 1, 20_000)).toBe(1);
      reader.socket.destroy();
      expect(await eventually(waiting, (n) => n === 0, 20_000)).toBe(0);
    } finally {
      await db.query('ROLLBACK');
    }
    await api().get(`/api/v1/data/${formId}.csv`).set('Authorization', owner.token).expect(200);
  });
});
