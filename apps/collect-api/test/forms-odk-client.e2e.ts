import { createHash } from 'node:crypto';
import { JSDOM } from 'jsdom';
import request from 'supertest';
import { tablesToXlsx, type WorkbookTables } from '@collect/xlsform';
import { jpeg } from './forms-fixtures.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * What an ODK client does with an XLSForm-made form, end to end against the running service
 * (docs/forms.md, "XLSForm uploads"): the XLSForm (groups, a repeat, select_multiple, an image
 * question, CSV lookups through select_one_from_file and pulldata) is uploaded and its media
 * attached; /formList names its manifest; the manifest's files download by hash; ODK Web Forms'
 * engine (@getodk/xforms-engine) loads the served form.xml, reads the CSVs through the manifest's
 * download URLs, and the submission it serializes (instance XML + the photo) is posted to
 * /submission as an OpenRosa client posts it, and stored. Then the form is replaced by a new
 * version: the earlier submission stays readable, a new one carries the new version.
 */
const FARM: WorkbookTables = {
  survey: [
    ['type', 'name', 'label', 'calculation', 'required'],
    ['text', 'farmer', 'Farmer', '', 'yes'],
    ['begin_group', 'farm', 'Farm'],
    ['select_one_from_file crops.csv', 'crop', 'Main crop'],
    ['calculate', 'price', '', "pulldata('prices', 'price', 'crop', ${crop})"],
    ['select_multiple tools', 'tools', 'Tools used'],
    ['image', 'photo', 'Photo of the farm'],
    ['end_group', ''],
    ['begin_repeat', 'plot', 'Plots'],
    ['decimal', 'area', 'Area (ha)'],
    ['end_repeat', ''],
    ['note', 'show', 'Price: ${price}'],
  ],
  choices: [['list_name', 'name', 'label'], ['tools', 'hoe', 'Hoe'], ['tools', 'plough', 'Plough'], ['tools', 'tractor', 'Tractor']],
  settings: [['form_id', 'form_title', 'version'], ['farm_survey', 'Farm survey', '2026112401']],
};
const CROPS = 'name,label\nmaize,Maize\nbeans,Beans\n';
const PRICES = 'crop,price\nmaize,12\nbeans,30\n';

interface EngineNode {
  nodeType: string;
  currentState: { reference: string; children?: EngineNode[] | null };
  setValue?: (v: unknown) => unknown;
  selectValue?: (v: string) => unknown;
  selectValues?: (v: string[]) => unknown;
  addInstances?: () => unknown;
}

/** The engine is written for browsers: jsdom gives it a DOM, as in libs/xlsform/test/engine.spec.ts. */
function installDom(): void {
  const { window } = new JSDOM('');
  const g = globalThis as Record<string, unknown>;
  g.__dirname = '/';
  for (const k of ['DOMParser', 'XMLSerializer', 'document', 'Node', 'Element', 'Document', 'NodeFilter', 'XPathResult']) g[k] = (window as unknown as Record<string, unknown>)[k];
}

function nodes(root: EngineNode): EngineNode[] {
  return [root, ...(root.currentState.children ?? []).flatMap(nodes)];
}

function node(root: EngineNode, ref: string): EngineNode {
  const found = nodes(root).find((n) => n.currentState.reference === ref);
  if (!found) throw new Error(`no engine node ${ref}; have ${nodes(root).map((n) => n.currentState.reference).join(', ')}`);
  return found;
}

const md5 = (data: Buffer | string) => `md5:${createHash('md5').update(data).digest('hex')}`;
const tag = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((m) => m[1].replace(/&amp;/g, '&'));

describe('an ODK client and an XLSForm with media, end to end', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let engine: typeof import('@getodk/xforms-engine');
  const auth = () => ({ Authorization: owner.token });
  /** GET of a full URL the service handed out (downloadUrl, manifestUrl), as the client follows it. */
  const follow = (url: string) => fetch(url.replace(sut.config.PUBLIC_BASE_URL, sut.url), { headers: auth() });

  beforeAll(async () => {
    installDom();
    engine = await import('@getodk/xforms-engine');
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
  });
  afterAll(() => sut.close());

  it('uploads, lists with a manifest, downloads media by hash, and stores what the engine submits; a new version keeps the old submission', async () => {
    const formid = (await request(sut.url).post('/api/v1/forms').set(auth()).attach('xls_file', Buffer.from(await tablesToXlsx(FARM)), 'farm.xlsx').expect(201)).body.formid as number;

    // Form media: the two CSV lookups the form names.
    const photo = await jpeg();
    for (const [name, body] of [['crops.csv', CROPS], ['prices.csv', PRICES]]) {
      const added = await request(sut.url).post('/api/v1/metadata').set(auth()).field('xform', String(formid)).field('data_type', 'media').field('data_value', name).attach('data_file', Buffer.from(body), name).expect(201);
      expect(added.body).toMatchObject({ xform: formid, data_type: 'media', data_value: name, data_file_type: 'text/csv', file_hash: md5(body) });
    }

    // /formList names the manifest; the manifest lists each file with its md5 and download URL.
    const list = await (await follow(`${sut.url}/formList`)).text();
    const entry = list.split('<xform>').find((x) => x.includes('<formID>farm_survey</formID>'))!;
    expect(tag(entry, 'hash')).toHaveLength(1);
    const [manifestUrl] = tag(entry, 'manifestUrl');
    expect(manifestUrl).toBe(`${sut.config.PUBLIC_BASE_URL}/xformsManifest/${formid}`);
    const manifest = await (await follow(manifestUrl)).text();
    expect(tag(manifest, 'filename')).toEqual(['crops.csv', 'prices.csv']);
    const downloads = new Map(tag(manifest, 'filename').map((name, i) => [name, { hash: tag(manifest, 'hash')[i], url: tag(manifest, 'downloadUrl')[i] }]));
    for (const [name, { hash, url }] of downloads) {
      const res = await follow(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${name}"`);
      // The client checks each file against the manifest's hash.
      expect(md5(Buffer.from(await res.arrayBuffer()))).toBe(hash);
    }

    // The engine loads the served form, reading the CSVs through the manifest's URLs.
    const xml = await (await follow(tag(entry, 'downloadUrl')[0])).text();
    const loaded = await engine.loadForm(xml, {
      fetchFormAttachment: async (url: URL) => {
        const name = url.href.slice(url.href.lastIndexOf('/') + 1);
        const download = downloads.get(name);
        return download ? follow(download.url) : new Response('', { status: 404 });
      },
    });
    expect([loaded.status, loaded.error?.message]).toEqual(['success', undefined]);
    const instance = loaded.createInstance();
    const root = instance.root as unknown as EngineNode & { prepareInstancePayload(): Promise<{ status: string; data: FormData[] }> };
    node(root, '/data/farmer').setValue!('Ann & Bo');
    node(root, '/data/farm/crop').selectValue!('beans');
    node(root, '/data/farm/tools').selectValues!(['hoe', 'plough']);
    node(root, '/data/farm/photo').setValue!(new File([new Uint8Array(photo)], 'farm.jpg', { type: 'image/jpeg' }));
    const range = nodes(root).find((n) => n.nodeType.startsWith('repeat-range'))!;
    if (!nodes(root).some((n) => /^\/data\/plot\[\d+\]\/area$/.test(n.currentState.reference))) range.addInstances!();
    range.addInstances!();
    const areas = nodes(root).filter((n) => /^\/data\/plot\[\d+\]\/area$/.test(n.currentState.reference));
    expect(areas).toHaveLength(2);
    areas[0].setValue!(1.5);
    areas[1].setValue!(0.25);
    const payload = await root.prepareInstancePayload();
    expect(payload.status).toBe('ready');
    const submissionXml = await (payload.data[0].get('xml_submission_file') as File).text();
    // The served form carries formhub/uuid: the engine's instance names the form exactly.
    const { body: form } = await request(sut.url).get(`/api/v1/forms/${formid}`).set(auth()).expect(200);
    expect(tag(submissionXml, 'uuid')).toContain(form.uuid);
    expect(tag(submissionXml, 'price')).toEqual(['30']);

    // Posted as an OpenRosa client posts it: the engine's own multipart body.
    const posted = await fetch(`${sut.url}/submission`, { method: 'POST', headers: { ...auth(), 'X-OpenRosa-Version': '1.0' }, body: payload.data[0] });
    expect([posted.status, await posted.text()]).toEqual([201, expect.stringContaining('submit_success')]);

    const [stored] = (await request(sut.url).get(`/api/v1/data/${formid}`).set(auth()).expect(200)).body as Array<Record<string, unknown>>;
    expect(stored).toMatchObject({
      farmer: 'Ann & Bo', 'farm/crop': 'beans', 'farm/price': '30', 'farm/tools': 'hoe plough', 'farm/photo': 'farm.jpg',
      plot: [{ 'plot/area': '1.5' }, { 'plot/area': '0.25' }], _version: '2026112401', 'formhub/uuid': form.uuid,
    });
    expect(stored._attachments).toEqual([expect.objectContaining({ name: 'farm.jpg', mimetype: 'image/jpeg' })]);

    // A new version: the earlier submission stays readable with its version, new ones carry the new one.
    const v2: WorkbookTables = { ...FARM, survey: [...FARM.survey, ['integer', 'workers', 'Workers']], settings: [['form_id', 'form_title', 'version'], ['farm_survey', 'Farm survey', '2026112402']] };
    await request(sut.url).patch(`/api/v1/forms/${formid}`).set(auth()).attach('xls_file', Buffer.from(await tablesToXlsx(v2)), 'farm.xlsx').expect(200);
    const xml2 = await (await follow(tag(entry, 'downloadUrl')[0])).text();
    const loaded2 = await engine.loadForm(xml2, { fetchFormAttachment: async (url: URL) => follow(downloads.get(url.href.slice(url.href.lastIndexOf('/') + 1))!.url) });
    expect(loaded2.status).toBe('success');
    const root2 = loaded2.createInstance().root as unknown as EngineNode & { prepareInstancePayload(): Promise<{ status: string; data: FormData[] }> };
    node(root2, '/data/farmer').setValue!('Cy');
    node(root2, '/data/workers').setValue!(4);
    const payload2 = await root2.prepareInstancePayload();
    expect((await fetch(`${sut.url}/submission`, { method: 'POST', headers: { ...auth(), 'X-OpenRosa-Version': '1.0' }, body: payload2.data[0] })).status).toBe(201);
    const data = (await request(sut.url).get(`/api/v1/data/${formid}`).set(auth()).expect(200)).body as Array<Record<string, unknown>>;
    expect(data.map((d) => [d.farmer, d._version, d.workers])).toEqual([['Ann & Bo', '2026112401', undefined], ['Cy', '2026112402', '4']]);
    expect(data[0]).toMatchObject({ 'farm/crop': 'beans', 'farm/photo': 'farm.jpg' });
    // The manifest still serves the media of the new version.
    expect(tag(await (await follow(manifestUrl)).text(), 'filename')).toEqual(['crops.csv', 'prices.csv']);
  });

  it('a broken XLSForm gets a row-numbered message', async () => {
    const broken: WorkbookTables = { ...FARM, survey: [...FARM.survey.slice(0, 5), ['select_multiple', 'tools', 'Tools used'], ...FARM.survey.slice(6)] };
    const res = await request(sut.url).post('/api/v1/forms').set(auth()).attach('xls_file', Buffer.from(await tablesToXlsx(broken)), 'farm.xlsx').expect(400);
    expect(res.body.errors).toEqual([expect.stringMatching(/^\[row : 6\] /)]);
  });
});
