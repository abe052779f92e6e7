import { jest } from '@jest/globals';
import pg from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** An XForm of select-multiples (question name → its items, value → label). */
function selectXForm(idString: string, version: string, questions: Record<string, Record<string, string>>): string {
  const names = Object.keys(questions);
  const select = (name: string) => {
    const items = Object.entries(questions[name]!).map(([value, label]) => `<item><label>${label}</label><value>${value}</value></item>`).join('');
    return `<select ref="/data/${name}"><label>${name}</label>${items}</select>`;
  };
  return `<?xml version="1.0"?>
<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:jr="http://openrosa.org/javarosa">
  <h:head><h:title>Versions</h:title><model>
    <instance><data id="${idString}" version="${version}">${names.map((n) => `<${n}/>`).join('')}<meta><instanceID/></meta></data></instance>
    ${names.map((n) => `<bind nodeset="/data/${n}" type="string"/>`).join('')}
    <bind nodeset="/data/meta/instanceID" type="string" readonly="true()" jr:preload="uid"/>
  </model></h:head>
  <h:body>${names.map(select).join('')}</h:body>
</h:html>`;
}

/**
 * The choices of an export's split select-multiples (docs/exports.md, "Split select-multiples"
 * and "Form versions"): read from `form_versions.choices` of the newest 100 versions, stored
 * when each version was; no version's XForm is read or parsed on the request path.
 */
describe('exports: choices of the form versions without their XForms', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  const ds = () => sut.app.get(DataSource);
  const api = () => request(sut.url);

  /** Runs `fn` and returns the statements it sent that name `form_versions`, with its result. */
  async function versionStatements<T>(fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
    const spy = jest.spyOn(pg.Client.prototype, 'query');
    try {
      const result = await fn();
      const statements = spy.mock.calls
        .map(([q]) => (typeof q === 'string' ? q : (q as { text?: string } | undefined)?.text))
        .filter((text): text is string => !!text?.includes('form_versions'));
      return { result, statements };
    } finally {
      spy.mockRestore();
    }
  }
  const header = (csv: string, prefix = 'm') => csv.split('\n')[0]!.split(',').filter((h) => h === prefix || h.startsWith(`${prefix}/`));

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
    const idString = `versions_${process.pid}`;
    // The oldest definition has a question `gone` that no later one has.
    formId = (await api().post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml')
      .send(selectXForm(idString, 'v0', { m: { a: 'Old A' }, gone: { ancient: 'Ancient' } })).expect(201)).body.formid;
    await api().patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).set('Content-Type', 'application/xml')
      .send(selectXForm(idString, 'v1', { m: { a: 'A', b: 'B' } })).expect(200);
    // 99 more versions as replacements store them (copies of the current one, each its own
    // `version`): the current definition and these are the newest 100, the first one is the 101st.
    const [{ id: current }] = await ds().query(`SELECT max(id) AS id FROM form_versions WHERE form_id = $1`, [formId]);
    const columns = ((await ds().query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'form_versions' AND column_name NOT IN ('id', 'version', 'date_created')`,
    )) as Array<{ column_name: string }>).map((c) => `"${c.column_name}"`).join(', ');
    await ds().query(
      `INSERT INTO form_versions (version, ${columns}) SELECT version || '-' || g, ${columns} FROM form_versions, generate_series(1, 99) g WHERE id = $1 ORDER BY g`,
      [current],
    );
    const [{ n }] = await ds().query(`SELECT count(*)::int AS n FROM form_versions WHERE form_id = $1`, [formId]);
    expect(n).toBe(101);
    await ds().query(
      `INSERT INTO submissions (form_id, uuid, json, xml, content_hash, submitted_by_id) VALUES ($1, $2::text, $3::jsonb, '<data/>', md5($2::text) || md5($2::text), $4)`,
      [formId, `${idString}-1`, JSON.stringify({ m: 'a' }), owner.id],
    );
  });
  afterAll(() => sut?.close());

  it('an export of a form of 101 versions: choices of the newest 100, and no statement selects form_versions.xml', async () => {
    const { result: csv, statements } = await versionStatements(async () =>
      (await api().get(`/api/v1/data/${formId}.csv?split_select_multiples=true`).set('Authorization', owner.token).buffer(true).expect(200)).text,
    );
    // `gone` is only in the 101st newest version: neither its column nor its choices are read.
    expect(header(csv)).toEqual(['m/a', 'm/b']);
    expect(header(csv, 'gone')).toEqual([]);
    expect(statements.length).toBeGreaterThan(0);
    expect(statements.filter((s) => /(^|\W)xml(\W|$)/.test(s))).toEqual([]);
    expect(statements.every((s) => /\bLIMIT 100\b/.test(s))).toBe(true);
  });

  it('the choices are the ones stored with each version (form_versions.choices), not its XForm text', async () => {
    const [{ id: newest }] = await ds().query(`SELECT max(id) AS id FROM form_versions WHERE form_id = $1`, [formId]);
    const stored = await ds().query(`SELECT choices FROM form_versions WHERE id = $1`, [newest]);
    expect(stored[0].choices).toEqual({ m: [{ value: 'a', label: 'A' }, { value: 'b', label: 'B' }] });
    // The newest version's stored choices alone say `c` (its XForm still lists a and b): the
    // newest version that lists `m` names its choices, then the values the answers use.
    await ds().query(`UPDATE form_versions SET choices = $2::jsonb WHERE id = $1`, [newest, JSON.stringify({ m: [{ value: 'c', label: 'C' }] })]);
    try {
      const csv = (await api().get(`/api/v1/data/${formId}.csv?split_select_multiples=true`).set('Authorization', owner.token).buffer(true).expect(200)).text;
      expect(header(csv)).toEqual(['m/c', 'm/a']);
    } finally {
      await ds().query(`UPDATE form_versions SET choices = $2::jsonb WHERE id = $1`, [newest, JSON.stringify(stored[0].choices)]);
    }
  });
});
