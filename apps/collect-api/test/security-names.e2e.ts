import request from 'supertest';
import { parseXml } from '../src/openrosa/xml.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Control and bidirectional characters in every name a user sets that lands in XML or a header
 * (docs/security.md, "Numbers, formulas and names"). A form media name taken from the upload's
 * file name (`filename*=UTF-8''%01ctl.csv`) skipped the file-name rule: the manifest was no
 * longer well-formed XML and phones could not fetch the form's media. Each row sends one
 * character through one place; refusals are 400 naming the field, and the documents that list
 * the names (manifest, form list, the XForm) stay well-formed XML whatever was tried.
 */

const BIDI = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];
const XML_FORBIDDEN = ['\u0001', '\u0008', '\u000b', '\u000c', '\u001f', '\ufffe', '\uffff'];
const OTHER_CONTROLS = ['\t', '\n', '\r', '\u007f', '\u0085', '\u009f'];
const hex = (c: string) => `U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
/** `filename*` (RFC 5987) of a name: UTF-8, percent-encoded. */
const ext = (name: string) => encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

describe('security: control and bidi characters in names users set', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let formId: number;

  beforeAll(async () => {
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
    formId = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: 'names', title: 'Names', fields: [{ name: 'a', type: 'text', label: 'A' }] }).expect(201)).body.formid;
  }, 60_000);
  afterAll(() => sut.close());

  const api = () => request(sut.url);
  /** A raw multipart upload of form media, the file part named by `disposition`. */
  const upload = (disposition: string, fields: Record<string, string> = {}) => {
    const all = { xform: String(formId), data_type: 'media', ...fields };
    const body = Buffer.concat([
      Buffer.from(Object.entries(all).map(([k, v]) => `--B\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('')),
      Buffer.from(`--B\r\nContent-Disposition: form-data; name="data_file"; ${disposition}\r\nContent-Type: text/csv\r\n\r\na,b\n1,2\n\r\n--B--\r\n`),
    ]);
    return api().post('/api/v1/metadata').set('Authorization', owner.token).set('Content-Type', 'multipart/form-data; boundary=B').send(body);
  };
  const manifestIsXml = async () => {
    const res = await api().get(`/xformsManifest/${formId}`).set('Authorization', owner.token).buffer(true).parse((r, cb) => {
      let text = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => (text += c));
      r.on('end', () => cb(null, text));
    }).expect(200);
    expect(() => parseXml(res.body as string)).not.toThrow();
  };

  const mediaCases = [...XML_FORBIDDEN, ...OTHER_CONTROLS, ...BIDI].map((c) => ({ label: hex(c), c }));

  it.each(mediaCases)('form media name from the file name (filename*) with $label: 400 naming data_file; the manifest stays XML', async ({ c }) => {
    const res = await upload(`filename*=UTF-8''${ext(`x${c}y.csv`)}`).expect(400);
    expect(Object.keys(res.body)).toEqual(['data_file']);
    await manifestIsXml();
  });

  it.each(mediaCases)('form media name in data_value with $label: 400 naming data_value', async ({ c }) => {
    const res = await upload('filename="ok.csv"', { data_value: `v${c}w.csv` }).expect(400);
    expect(Object.keys(res.body)).toEqual(['data_value']);
  });

  it('the byte from the report (%01) and a name of plain and right-to-left letters', async () => {
    expect((await upload("filename*=UTF-8''%01ctl.csv").expect(400)).body).toEqual({ data_file: ['A file name (no "/" or "\\", at most 255 characters).'] });
    await upload(`filename*=UTF-8''${ext('שלום.csv')}`).expect(201);
    await upload('filename="plain.csv"').expect(201);
    await manifestIsXml();
  });

  const titleRefused = [...XML_FORBIDDEN, ...OTHER_CONTROLS].map((c) => ({ label: hex(c), c }));
  it.each(titleRefused)('form title, version and PATCH title with $label: 400; the form list stays XML', async ({ c }) => {
    const create = (o: Record<string, unknown>) => api().post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: `t${c.charCodeAt(0)}`, title: 'T', fields: [{ name: 'a', type: 'text' }], ...o });
    expect(Object.keys((await create({ title: `a${c}b` }).expect(400)).body)).toEqual(['title']);
    expect(Object.keys((await create({ version: `1${c}2` }).expect(400)).body)).toEqual(['version']);
    expect(Object.keys((await api().patch(`/api/v1/forms/${formId}`).set('Authorization', owner.token).send({ title: `a${c}b` }).expect(400)).body)).toEqual(['title']);
    const list = await api().get('/formList').set('Authorization', owner.token).buffer(true).parse((r, cb) => {
      let text = '';
      r.setEncoding('utf8');
      r.on('data', (d: string) => (text += d));
      r.on('end', () => cb(null, text));
    }).expect(200);
    expect(() => parseXml(list.body as string)).not.toThrow();
  });

  it.each(XML_FORBIDDEN.map((c) => ({ label: hex(c), c })))('a question label with $label: 400 (the XForm would not be XML)', async ({ c }) => {
    const res = await api().post('/api/v1/forms').set('Authorization', owner.token).send({ id_string: 'lbl', title: 'L', fields: [{ name: 'a', type: 'text', label: `a${c}b` }] }).expect(400);
    expect(Object.keys(res.body)).toEqual(['fields']);
  });

  it('right-to-left titles keep their bidirectional marks; multi-line labels keep their line breaks; the XForm is XML', async () => {
    const created = await api().post('/api/v1/forms').set('Authorization', owner.token)
      .send({ id_string: 'rtl', title: '\u200fשאלון\u200f', fields: [{ name: 'a', type: 'text', label: 'line one\nline two\tend' }] }).expect(201);
    const xml = await api().get(`/api/v1/forms/${created.body.formid as number}/form.xml`).set('Authorization', owner.token).buffer(true).parse((r, cb) => {
      let text = '';
      r.setEncoding('utf8');
      r.on('data', (d: string) => (text += d));
      r.on('end', () => cb(null, text));
    }).expect(200);
    expect(() => parseXml(xml.body as string)).not.toThrow();
  });

  it.each(['\u0001', '\u202e', '\n'].map((c) => ({ label: hex(c), c })))('a rest service name with $label: 400 naming name (a fixed list)', async ({ c }) => {
    const res = await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: `generic_json${c}`, service_url: 'https://example.org/hook' }).expect(400);
    expect(Object.keys(res.body)).toContain('name');
  });
});
