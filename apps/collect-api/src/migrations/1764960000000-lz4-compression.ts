import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The large values written with every submission: its answers and XML, a delivery's snapshot and kept request body. */
export const LZ4_COLUMNS: ReadonlyArray<readonly [table: string, column: string]> = [
  ['submissions', 'json'],
  ['submissions', 'xml'],
  ['rest_deliveries', 'snapshot'],
  ['rest_deliveries', 'body'],
];

/**
 * Whether the server has column compression methods at all (PostgreSQL 14 and later have
 * `default_toast_compression`) and whether lz4 is one of them (only on a build with lz4).
 */
async function compressionMethods(q: Pick<QueryRunner, 'query'>): Promise<{ methods: boolean; lz4: boolean }> {
  const rows = (await q.query(`SELECT 'lz4' = ANY(enumvals) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'`)) as Array<{ lz4: boolean }>;
  return { methods: rows.length > 0, lz4: rows[0]?.lz4 === true };
}

/** Whether the server was built with lz4 (then, and only then, `default_toast_compression` offers it). */
export async function serverHasLz4(q: Pick<QueryRunner, 'query'>): Promise<boolean> {
  return (await compressionMethods(q)).lz4;
}

/**
 * The large per-submission columns are compressed with lz4 instead of pglz, on servers built
 * with lz4 (the Debian and official PostgreSQL packages and images are; the embedded
 * PostgreSQL of dev and tests is not, and keeps pglz). pglz_compress was 17 % of PostgreSQL's
 * CPU per 250-answer JSON submission; on a server with lz4 an insert of such a row (answers,
 * XML, GIN index) cost 90-190 µs less backend CPU, reads stayed the same, and the values took
 * 16-22 % more room (docs/architecture.md, "The submission record: one pass, few allocations";
 * docs/operations.md, "Compression of large values"). Only the
 * method of values written from now on changes: stored values keep theirs and read as before,
 * and the ALTERs touch the catalog only, no table rewrite.
 */
export class Lz4Compression1764960000000 implements MigrationInterface {
  name = 'Lz4Compression1764960000000';

  async up(q: QueryRunner): Promise<void> {
    if (!(await serverHasLz4(q))) return;
    for (const [table, column] of LZ4_COLUMNS) await q.query(`ALTER TABLE ${table} ALTER COLUMN ${column} SET COMPRESSION lz4`);
  }

  async down(q: QueryRunner): Promise<void> {
    // Before PostgreSQL 14 there is no method to set back (nor could `up` have set one).
    if (!(await compressionMethods(q)).methods) return;
    for (const [table, column] of LZ4_COLUMNS) await q.query(`ALTER TABLE ${table} ALTER COLUMN ${column} SET COMPRESSION DEFAULT`);
  }
}
