import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import request from 'supertest';
import { tablesToXlsx, type WorkbookTables } from '@collect/xlsform';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';
import { lyingZip } from '@collect/testing';
import { FormsService } from '../src/forms/forms.service.js';
import { parseXForm } from '../src/forms/form-definition.js';

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

  it('refuses an .xlsx whose zip directory understates a sheet that inflates past the limit, with a clear 400', async () => {
    const bomb = await lyingZip([{ name: 'xl/worksheets/sheet1.xml', inflatedBytes: 200 * 1024 * 1024, declaredBytes: 1000 }]);
    const res = await post().attach('xls_file', bomb, 'bomb.xlsx').expect(400);
    expect(res.body.errors).toEqual([expect.stringMatching(/^The workbook unpacks to more than \d+ bytes; the limit is \d+\.$/)]);
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
    // event loop (the app runs in it) took a quarter of the upload: the conversion and the
    // reading of the XForm it made both run in worker threads. Either on the event loop would be
    // one stall of 70-90% of the upload (checked by hand by moving it there).
    const stall = delay.max / 1e6 / elapsedMs;
    console.log(`event loop during a 5,000-row XLSForm upload: ${probes} health probes answered, longest stall ${(delay.max / 1e6).toFixed(0)} ms of ${elapsedMs.toFixed(0)} ms (${stall.toFixed(3)})`);
    expect(probes).toBeGreaterThanOrEqual(3);
    expect(stall).toBeLessThan(0.25);
  });

  /** A text body (supertest leaves application/xml unparsed). */
  const text = (r: request.Test) => r.buffer(true).parse((res, cb) => {
    let body = '';
    res.on('data', (c: Buffer) => (body += c.toString('utf8')));
    res.on('end', () => cb(null, body));
  });

  describe('versions: PATCH replaces the definition, the submissions stay', () => {
    const V1: WorkbookTables = {
      survey: [['type', 'name', 'label'], ['text', 'name', 'Name'], ['integer', 'old_count', 'Count'], ['begin_group', 'g', 'G'], ['text', 'kept', 'Kept'], ['text', 'dropped', 'Dropped'], ['end_group', '']],
      settings: [['form_id', 'version'], ['versioned', 'v1']],
    };
    const V2: WorkbookTables = {
      survey: [['type', 'name', 'label'], ['text', 'name', 'Name'], ['begin_group', 'g', 'G'], ['text', 'kept', 'Kept'], ['end_group', ''], ['decimal', 'new_amount', 'Amount']],
      settings: [['form_id', 'form_title', 'version'], ['versioned', 'Versioned v2', 'v2']],
    };
    const instance = (version: string, answers: string) =>
      `<?xml version="1.0"?><data id="versioned" version="${version}">${answers}<meta><instanceID>uuid:${randomUUID()}</instanceID></meta></data>`;
    const openRosa = (xml: string) => request(sut.url).post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0').attach('xml_submission_file', Buffer.from(xml), 'submission.xml');

    it('keeps earlier submissions with their _version; new ones carry the new version; every definition is kept', async () => {
      const formId = (await post().attach('xls_file', Buffer.from(await tablesToXlsx(V1)), 'versioned.xlsx').expect(201)).body.formid as number;
      await openRosa(instance('v1', '<name>before</name><old_count>3</old_count><g><kept>k</kept><dropped>d</dropped></g>')).expect(201);
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'versioned', submission: { name: 'json before' } }).expect(201);
      const hashBefore = /<hash>(md5:[0-9a-f]+)<\/hash>/.exec((await text(request(sut.url).get('/formList?formID=versioned').set('Authorization', owner.token)).expect(200)).body)![1];

      const replaced = await request(sut.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).attach('xls_file', Buffer.from(await tablesToXlsx(V2)), 'versioned.xlsx').expect(200);
      expect(replaced.body).toMatchObject({ formid: formId, version: 'v2', title: 'Versioned v2', num_of_submissions: 2 });
      const served = (await text(request(sut.url).get(`/api/v1/forms/${formId}/form.xml`).set('Authorization', owner.token)).expect(200)).body as string;
      expect(parseXForm(served).fields.map((f) => f.xpath)).toEqual(['name', 'g', 'g/kept', 'new_amount']);
      const listed = (await text(request(sut.url).get('/formList?formID=versioned').set('Authorization', owner.token)).expect(200)).body as string;
      expect(listed).toContain('<version>v2</version>');
      expect(listed).not.toContain(hashBefore);

      // A client still on v1 submits after the replacement: its instance names v1.
      await openRosa(instance('v1', '<name>late v1</name><old_count>4</old_count>')).expect(201);
      await openRosa(instance('v2', '<name>after</name><g><kept>k2</kept></g><new_amount>2.5</new_amount>')).expect(201);
      await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'versioned', submission: { name: 'json after' } }).expect(201);
      const data = (await request(sut.url).get(`/api/v1/data/${formId}`).set('Authorization', owner.token).expect(200)).body as Array<Record<string, unknown>>;
      expect(data.map((d) => [d.name, d._version])).toEqual([['before', 'v1'], ['json before', 'v1'], ['late v1', 'v1'], ['after', 'v2'], ['json after', 'v2']]);
      expect(data[0]).toMatchObject({ old_count: '3', 'g/dropped': 'd', 'g/kept': 'k' });

      // Where data-out finds the columns of every version (docs/forms.md, "Form versions").
      const all = await sut.app.get(FormsService).fieldsOfAllVersions(formId);
      expect(all.map((f) => f.xpath)).toEqual(['name', 'g', 'g/kept', 'g/dropped', 'new_amount', 'old_count']);
    });

    it('gives the form a new version when the definition repeats one it had (or has none), written into the served XForm', async () => {
      const formId = (await post().attach('xls_file', Buffer.from(await tablesToXlsx({ ...V1, settings: [['form_id', 'version'], ['again', 'v1']] })), 'again.xlsx').expect(201)).body.formid as number;
      const same = await request(sut.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).attach('xls_file', Buffer.from(await tablesToXlsx({ ...V2, settings: [['form_id', 'version'], ['again', 'v1']] })), 'again.xlsx').expect(200);
      expect(same.body.version).toMatch(/^\d{14}$/);
      const served = (await text(request(sut.url).get(`/api/v1/forms/${formId}/form.xml`).set('Authorization', owner.token)).expect(200)).body as string;
      expect(parseXForm(served).version).toBe(same.body.version);
      // An XForm body and a JSON definition replace it too; the JSON one without a version gets one.
      const xml = served.replace(`version="${same.body.version}"`, 'version="x3"');
      expect((await request(sut.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).set('Content-Type', 'application/xml').send(xml).expect(200)).body.version).toBe('x3');
      const json = await request(sut.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).send({ id_string: 'again', title: 'Again', fields: [{ name: 'only', type: 'text' }] }).expect(200);
      expect(json.body.version).toMatch(/^\d{14}(-\d+)?$/);
      expect(json.body.version).not.toBe(same.body.version);
      // A title change alone is still a PATCH of the resource.
      expect((await request(sut.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).send({ title: 'Renamed' }).expect(200)).body).toMatchObject({ title: 'Renamed', version: json.body.version });
    });

    it('refuses a definition with another id_string, and a broken one, changing nothing', async () => {
      const formId = (await post().attach('xls_file', Buffer.from(await tablesToXlsx({ ...V1, settings: [['form_id', 'version'], ['stay', 'v1']] })), 'stay.xlsx').expect(201)).body.formid as number;
      const other = await request(sut.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).attach('xls_file', Buffer.from(await tablesToXlsx(V2)), 'x.xlsx').expect(400);
      expect(other.body).toEqual({ id_string: [expect.stringContaining('must match the form\'s id_string "stay"')] });
      const broken = await request(sut.url).patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).attach('xls_file', Buffer.from(await tablesToXlsx({ survey: [['type', 'name'], ['nonsense', 'q']] })), 'x.xlsx').expect(400);
      expect(broken.body.errors[0]).toContain('[row : 2]');
      expect((await request(sut.url).get(`/api/v1/forms/${formId}`).set('Authorization', owner.token).expect(200)).body.version).toBe('v1');
    });
  });

  it("serves every form with <formhub><uuid> calculating its own uuid, so OpenRosa clients name it in their submissions", async () => {
    const created = await post().attach('xls_file', Buffer.from(await tablesToXlsx({ ...HOUSEHOLD, settings: [['form_id'], ['formhub_check']] })), 'f.xlsx').expect(201);
    const served = (await text(request(sut.url).get(`/forms/${created.body.formid}/form.xml`).set('Authorization', owner.token)).expect(200)).body as string;
    expect(served).toContain('<formhub><uuid/></formhub>');
    expect(served).toContain(`<bind nodeset="/data/formhub/uuid" type="string" calculate="'${created.body.uuid}'"/>`);
  });

  it('attaches the external_choices sheet as the form media file itemsets.csv', async () => {
    const tables: WorkbookTables = {
      survey: [['type', 'name', 'label', 'choice_filter'], ['select_one states', 'state', 'State'], ['select_one_external cities', 'city', 'City', 'state=${state}']],
      choices: [['list_name', 'name', 'label'], ['states', 'ca', 'California'], ['states', 'tx', 'Texas']],
      external_choices: [['list_name', 'name', 'label', 'state'], ['cities', 'la', 'Los Angeles', 'ca'], ['cities', 'austin', 'Austin', 'tx']],
      settings: [['form_id'], ['with_itemsets']],
    };
    const formid = (await post().attach('xls_file', Buffer.from(await tablesToXlsx(tables)), 'x.xlsx').expect(201)).body.formid as number;
    const media = (await request(sut.url).get(`/api/v1/metadata?xform=${formid}`).set('Authorization', owner.token).expect(200)).body as Array<{ data_value: string; media_url: string }>;
    expect(media.map((m) => m.data_value)).toEqual(['itemsets.csv']);
    const csv = await (await fetch(media[0].media_url.replace(sut.config.PUBLIC_BASE_URL, sut.url), { headers: { Authorization: owner.token } })).text();
    expect(csv).toContain('Los Angeles');
  });

  it('refuses a JSON submission without answers (400), as the peers do', async () => {
    await post().set('Content-Type', 'application/json').send({ id_string: 'answers_needed', fields: [{ name: 'q', type: 'text' }] }).expect(201);
    for (const submission of [{}, { meta: { instanceID: `uuid:${randomUUID()}` } }, { q: '' }]) {
      const res = await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'answers_needed', submission }).expect(400);
      expect(res.body).toEqual({ submission: ['The submission has no answers.'] });
    }
    await request(sut.url).post('/api/v1/submissions').set('Authorization', owner.token).send({ id: 'answers_needed', submission: { q: 'a' } }).expect(201);
  });

  it('reads a large XForm upload in a worker thread too: a malformed one is still a 400 on xml_file', async () => {
    const big = `<?xml version="1.0"?><h:html xmlns:h="http://www.w3.org/1999/xhtml"><h:head><model><instance><data id="big">${'<q/>'.repeat(40_000)}</data></instance></model></h:head><h:body>`;
    const res = await post().set('Content-Type', 'application/xml').send(big).expect(400);
    expect(res.body).toEqual({ xml_file: [expect.stringContaining('Malformed XML')] });
  });

  describe('a workbook that needs more memory than a conversion may use', () => {
    let small: TestCollectApp;
    let smallOwner: TestUser;
    beforeAll(async () => {
      small = await startTestCollectApp({ XLSFORM_CONVERT_MAX_HEAP_MB: '64' });
      smallOwner = await createTestUser(small.app);
    });
    afterAll(() => small.close());

    it('fails as a 400 for that upload, and the API process keeps serving the next ones', async () => {
      // 4,000 questions in 40 languages: 160,000 translated labels from a 1 MB workbook.
      const langs = Array.from({ length: 40 }, (_, i) => `L${i}`);
      const survey = [['type', 'name', ...langs.map((l) => `label::${l}`)]];
      for (let i = 0; i < 4000; i++) survey.push(['text', `q${i}`, ...langs.map((l) => `Q${i} ${l}`)]);
      const hostile = Buffer.from(await tablesToXlsx({ survey }));
      const res = await request(small.url).post('/api/v1/forms').set('Authorization', smallOwner.token).attach('xls_file', hostile, 'hostile.xlsx').expect(400);
      expect(res.body.errors).toEqual(['The XLSForm could not be converted: the workbook needs more than 64 MB of memory to convert.']);
      await request(small.url).get('/health/live').expect(200);
      const ok = await request(small.url).post('/api/v1/forms').set('Authorization', smallOwner.token).attach('xls_file', Buffer.from(await tablesToXlsx(HOUSEHOLD)), 'household.xlsx').expect(201);
      expect(ok.body.id_string).toBe('household_xls');
    });
  });
});

