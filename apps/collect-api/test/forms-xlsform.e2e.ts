import { monitorEventLoopDelay } from 'node:perf_hooks';
import request from 'supertest';
import { tablesToXlsx, type WorkbookTables } from '@collect/xlsform';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/** A household XLSForm: a group, a repeat, selects (docs/forms.md, "XLSForm uploads"). */
const HOUSEHOLD: WorkbookTables = {
  survey: [
    ['type', 'name', 'label', 'required'],
    ['text', 'respondent', 'Respondent', 'yes'],
    ['begin_group', 'home', 'Home'],
    ['integer', 'rooms', 'Rooms'],
    ['select_multiple amenities', 'amenities', 'Amenities'],
    ['end_group', ''],
    ['begin_repeat', 'member', 'Members'],
    ['text', 'member_name', 'Name'],
    ['end_repeat', ''],
  ],
  choices: [['list_name', 'name', 'label'], ['amenities', 'water', 'Water'], ['amenities', 'power', 'Power']],
  settings: [['form_id', 'form_title', 'version'], ['household_xls', 'Household (XLSForm)', '2026112401']],
};

/** A form of about `rows` survey rows (groups, selects with a filter, repeats, calculations), as the bench makes. */
function largeForm(rows: number): WorkbookTables {
  const survey: string[][] = [['type', 'name', 'label', 'relevant', 'calculation', 'choice_filter']];
  for (let b = 0; survey.length <= rows; b++) {
    survey.push(['begin_group', `g${b}`, `Section ${b}`], ['integer', `age${b}`, 'Age'], ['select_one region', `region${b}`, 'Region', `\${age${b}} > 17`]);
    survey.push(['select_one district', `district${b}`, 'District', '', '', `region = \${region${b}}`], ['end_group', '']);
    survey.push(['begin_repeat', `r${b}`, 'Members'], ['text', `m${b}`, 'Name'], ['calculate', `c${b}`, '', '', `\${age${b}} * 2`], ['end_repeat', '']);
  }
  const choices: string[][] = [['list_name', 'name', 'label', 'region']];
  for (let i = 0; i < 10; i++) choices.push(['region', `r${i}`, `Region ${i}`, '']);
  for (let i = 0; i < 50; i++) choices.push(['district', `d${i}`, `District ${i}`, `r${i % 10}`]);
  return { survey, choices, settings: [['form_id', 'version'], [`large_${rows}`, '1']] };
}

describe('forms: XLSForm uploads (xls_file), converted in a worker thread', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  const post = () => request(sut.url).post('/api/v1/forms').set('Authorization', owner.token);

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
  });
  afterAll(() => sut.close());

  it('converts an .xlsx: id_string, title and version from settings, fields in form order, the XForm served', async () => {
    const created = await post().attach('xls_file', Buffer.from(await tablesToXlsx(HOUSEHOLD)), 'household.xlsx').expect(201);
    expect(created.body).toMatchObject({ id_string: 'household_xls', title: 'Household (XLSForm)', version: '2026112401' });
    const fields = (await request(sut.url).get(`/api/v1/forms/${created.body.formid}/fields`).set('Authorization', owner.token).expect(200)).body as Array<{ xpath: string; type: string; repeat?: string }>;
    expect(fields.map((f) => [f.xpath, f.type])).toEqual([
      ['respondent', 'text'], ['home', 'group'], ['home/rooms', 'integer'], ['home/amenities', 'select all that apply'], ['member', 'repeat'], ['member/member_name', 'text'],
    ]);
    const xml = (await request(sut.url).get(`/api/v1/forms/${created.body.formid}/form.xml`).set('Authorization', owner.token).buffer(true).parse((res, cb) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => cb(null, text));
    }).expect(200)).body as string;
    expect(xml).toContain('<bind nodeset="/data/respondent" type="string" required="true()"/>');
    expect(xml).toContain('<repeat nodeset="/data/member">');
  });

  it('uses the file name as form_id when the settings sheet names none, as pyxform does', async () => {
    const { settings: _settings, ...noSettings } = HOUSEHOLD;
    const created = await post().attach('xls_file', Buffer.from(await tablesToXlsx(noSettings)), 'my_survey.xlsx').expect(201);
    expect(created.body).toMatchObject({ id_string: 'my_survey', version: '' });
  });

  it('a broken XLSForm is 400 {detail, errors, warnings} with row-numbered messages; nothing is stored', async () => {
    const broken: WorkbookTables = { survey: [['type', 'name', 'label'], ['text', 'ok', 'OK'], [], ['integer', 'bad name', 'Bad']], settings: [['form_id'], ['broken_xls']] };
    const res = await post().attach('xls_file', Buffer.from(await tablesToXlsx(broken)), 'broken.xlsx').expect(400);
    expect(res.body).toEqual({ detail: expect.stringContaining('[row : 4]'), errors: [expect.stringMatching(/^\[row : 4\] On the 'survey' sheet, the 'name' value is invalid/)], warnings: [] });
    const several = { survey: [['type', 'name', 'label'], ['select_one nowhere', 'a', 'A'], ['integer', 'b c', 'B']] };
    const many = await post().attach('xls_file', Buffer.from(await tablesToXlsx(several)), 'several.xlsx').expect(400);
    expect(many.body.detail).toBe('The XLSForm has 2 errors.');
    expect(many.body.errors).toEqual(expect.arrayContaining([expect.stringContaining('[row : 3]')]));
    const list = (await request(sut.url).get('/api/v1/forms').set('Authorization', owner.token).expect(200)).body as Array<{ id_string: string }>;
    expect(list.map((f) => f.id_string)).not.toContain('broken_xls');
  });

  it('refuses an old Excel .xls workbook and a file that is no workbook, with a clear 400', async () => {
    const ole2 = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(504)]);
    const xls = await post().attach('xls_file', ole2, 'form.xls').expect(400);
    expect(xls.body).toEqual({ detail: expect.stringContaining('.xls'), errors: [expect.stringContaining('save the form as .xlsx')], warnings: [] });
    const junk = await post().attach('xls_file', Buffer.from('not a zip at all'), 'form.xlsx').expect(400);
    expect(junk.body.errors).toHaveLength(1);
    const none = await post().field('title', 'x').expect(400);
    expect(none.body).toEqual({ xls_file: [expect.stringContaining('No xls_file')] });
  });

  it('keeps the event loop answering while a large form converts (worker thread)', async () => {
    const big = Buffer.from(await tablesToXlsx(largeForm(5000)));
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = process.hrtime.bigint();
    let done = false;
    const upload = post().attach('xls_file', big, 'large.xlsx').then((res) => {
      done = true;
      return res;
    });
    let probes = 0;
    while (!done) {
      await request(sut.url).get('/health/live').expect(200);
      probes++;
    }
    const res = await upload;
    const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
    delay.disable();
    expect(res.status).toBe(201);
    expect(res.body.id_string).toBe('large_5000');
    // Health probes kept being answered during the upload, and no single stall of this process's
    // event loop (the app runs in it) took more than a fifth of the upload: a conversion on the
    // event loop would be one stall of most of it.
    expect(probes).toBeGreaterThanOrEqual(3);
    expect(delay.max / 1e6 / elapsedMs).toBeLessThan(0.2);
  });
});
