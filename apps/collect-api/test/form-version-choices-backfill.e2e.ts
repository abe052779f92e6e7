import request from 'supertest';
import { DataSource } from 'typeorm';
import { FormVersionChoices1765100000000 } from '../src/migrations/1765100000000-form-version-choices.js';
import { demoXForm } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

const CHOICES = { colour: [{ value: 'red', label: 'Red' }, { value: 'blue', label: null }] };
const XFORM = demoXForm('backfill').replace('<name/>', '<colour/><name/>').replace(
  '<input ref="/data/name">',
  '<select ref="/data/colour"><label>Colour</label><item><label>Red</label><value>red</value></item><item><value>blue</value></item></select><input ref="/data/name">',
);

/**
 * The versions stored before `form_versions.choices` existed get their choices from their XForm
 * in the migration that adds the column (docs/exports.md, "Form versions"), a batch at a time;
 * a version that has its choices keeps them.
 */
describe('migration: form_versions.choices filled for the versions stored before it', () => {
  let sut: TestCollectApp;
  let owner: TestUser;

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
  });
  afterAll(() => sut?.close());

  it('45 versions without choices (more than one batch) are filled from their XForms; others stay', async () => {
    const ds = sut.app.get(DataSource);
    const formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(XFORM).expect(201)).body.formid;
    const [kept] = await ds.query(`SELECT id, choices FROM form_versions WHERE form_id = $1`, [formId]);
    expect(kept.choices).toEqual(CHOICES);
    // Rows as the code before the column stored them: every column but `choices`.
    await ds.query(
      `INSERT INTO form_versions (form_id, version, title, root_name, xml, json_definition, fields)
       SELECT form_id, version || '-' || g, title, root_name, xml, json_definition, fields FROM form_versions, generate_series(1, 45) g WHERE id = $1 ORDER BY g`,
      [kept.id],
    );
    // A version whose stored choices differ from its XForm's: the backfill leaves it.
    await ds.query(`UPDATE form_versions SET choices = '{"other": []}'::jsonb WHERE id = $1`, [kept.id]);
    const before = await ds.query(`SELECT count(*)::int AS n FROM form_versions WHERE form_id = $1 AND choices IS NULL`, [formId]);
    expect(before[0].n).toBe(45);

    const runner = ds.createQueryRunner();
    try {
      await new FormVersionChoices1765100000000().up(runner);
    } finally {
      await runner.release();
    }

    const rows = (await ds.query(`SELECT id, choices FROM form_versions WHERE form_id = $1 ORDER BY id`, [formId])) as Array<{ id: number; choices: unknown }>;
    expect(rows).toHaveLength(46);
    expect(rows[0]).toEqual({ id: kept.id, choices: { other: [] } });
    for (const row of rows.slice(1)) expect(row.choices).toEqual(CHOICES);
  });
});
