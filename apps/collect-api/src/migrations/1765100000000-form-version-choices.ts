import type { MigrationInterface, QueryRunner } from 'typeorm';
import { xformChoicesRecord } from '../openrosa/xform-choices.js';

/** Versions read and written per statement of the backfill (their XForms can be megabytes each). */
const BATCH = 20;

/**
 * Each form version keeps the choices of its select questions (`form_versions.choices`), read
 * from its XForm once, when it is stored: exports read these instead of parsing every
 * version's XForm on the request path (docs/exports.md, "Split select-multiples"). The versions
 * stored before are filled in here, a batch at a time.
 */
export class FormVersionChoices1765100000000 implements MigrationInterface {
  name = 'FormVersionChoices1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE form_versions ADD COLUMN IF NOT EXISTS choices jsonb`);
    for (let after = 0; ; ) {
      const rows = (await q.query(`SELECT id, xml FROM form_versions WHERE id > $1 AND choices IS NULL ORDER BY id LIMIT ${BATCH}`, [after])) as Array<{ id: number; xml: string }>;
      for (const row of rows) await q.query(`UPDATE form_versions SET choices = $2::jsonb WHERE id = $1`, [row.id, JSON.stringify(xformChoicesRecord(row.xml))]);
      if (rows.length < BATCH) break;
      after = rows[rows.length - 1]!.id;
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE form_versions DROP COLUMN IF EXISTS choices`);
  }
}
