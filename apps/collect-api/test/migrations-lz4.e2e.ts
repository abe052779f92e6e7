import { DataSource } from 'typeorm';
import { LZ4_COLUMNS, Lz4Compression1764960000000, serverHasLz4 } from '../src/migrations/1764960000000-lz4-compression.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';

/**
 * Migration 1764960000000: the large per-submission columns use lz4 where the server has it, and
 * keep the default (pglz) where it has not, as the embedded PostgreSQL of the tests (docs/operations.md,
 * "Compression of large values"). Either way `down` restores the default and `up` applies again.
 */
describe('migration 1764960000000: lz4 for the large per-submission columns', () => {
  let sut: TestCollectApp;
  let db: DataSource;
  /** pg_attribute.attcompression of each column: 'l' lz4, 'p' pglz, '' the server's default. */
  const methods = async () => {
    const out: string[] = [];
    for (const [table, column] of LZ4_COLUMNS) {
      const rows = (await db.query(`SELECT attcompression::text AS m FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2 AND NOT attisdropped`, [table, column])) as Array<{ m: string }>;
      expect(rows).toHaveLength(1);
      out.push(`${table}.${column}=${rows[0]!.m}`);
    }
    return out;
  };
  const expected = (m: string) => LZ4_COLUMNS.map(([table, column]) => `${table}.${column}=${m}`);

  beforeAll(async () => {
    sut = await startTestCollectApp();
    db = sut.app.get(DataSource);
  });
  afterAll(async () => {
    await sut?.close();
  });

  it('sets lz4 on servers built with it, leaves the default elsewhere; down and up again', async () => {
    const lz4 = await serverHasLz4(db);
    const applied = expected(lz4 ? 'l' : '');
    expect(await methods()).toEqual(applied);
    const runner = db.createQueryRunner();
    await runner.connect();
    try {
      const migration = new Lz4Compression1764960000000();
      await migration.down(runner);
      expect(await methods()).toEqual(expected(''));
      await migration.up(runner);
      expect(await methods()).toEqual(applied);
    } finally {
      await runner.release();
    }
  });
});
