import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { ExportRunner } from '../src/exports/export-runner.js';
import { INERT_CSP } from '../src/storage/served-content.js';
import { demoInstance, demoXForm, jpeg } from './forms-fixtures.js';
import { listRoutes } from './routes.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Served content (docs/security.md, "Inert served content"): every GET
 * route the Express router holds is called, as the owner of stored data that carries a marker
 * everywhere a user can put bytes (form title and XForm, an XHTML script, answers, attachment
 * files named x.html, x.svg, names of applications, views and datasets). Any answer that
 * carries the marker is checked:
 * - JSON: `application/json` with nosniff (a browser never renders it);
 * - an HTML page of ours: its own strict CSP (`default-src 'none'`, no script);
 * - anything else (the stored bytes themselves): `Content-Security-Policy: default-src 'none';
 *   sandbox`, nosniff, `Content-Disposition: attachment`, never an HTML or SVG type.
 * A GET route with path parameters needs a row in CALLS (the test fails naming it), so a new
 * route that serves stored bytes cannot ship unchecked; one without parameters is called as is.
 */
const MARK = `mk${randomUUID().replace(/-/g, '').slice(0, 12)}`;

interface Fixture {
  owner: TestUser;
  formId: number;
  submissionId: number;
  /** The submission's instance id and its form's id_string (the Briefcase pull names it so). */
  instanceId: string;
  idString: string;
  mergedId: number;
  dataviewId: number;
  serviceId: number;
  appId: number;
  /** A finished asynchronous CSV export. */
  exportId: string;
  media: Array<{ id: number; filename: string; mimetype: string }>;
  /** Form media files (metadata ids) whose names and bytes carry the marker. */
  formMedia: number[];
  /** An entity list and an entity whose label carries the marker. */
  listId: number;
  entityId: number;
  /** A form that loads the list as `list_<marker>.csv` (a follow-up form's list attachment). */
  lookupFormId: number;
}

interface Call {
  path: string;
  accept?: string;
}

/** Concrete calls of the GET routes with parameters. */
const CALLS: Record<string, (f: Fixture) => Call[]> = {
  'GET /api/v1/users/:username': (f) => [{ path: `/api/v1/users/${f.owner.username}` }],
  'GET /api/v1/profiles/:username': (f) => [{ path: `/api/v1/profiles/${f.owner.username}` }],
  'GET /api/v1/oauth-applications/:id': (f) => [{ path: `/api/v1/oauth-applications/${f.appId}` }],
  'GET /api/v1/forms/:pk': (f) => [{ path: `/api/v1/forms/${f.formId}` }],
  'GET /api/v1/forms/:pk/form.xml': (f) => [{ path: `/api/v1/forms/${f.formId}/form.xml` }],
  'GET /api/v1/forms/:pk/fields': (f) => [{ path: `/api/v1/forms/${f.formId}/fields` }],
  'GET /api/v1/forms/:pk/encryption': (f) => [{ path: `/api/v1/forms/${f.formId}/encryption` }],
  'GET /forms/:pk/form.xml': (f) => [{ path: `/forms/${f.formId}/form.xml` }],
  'GET /:username/formList': (f) => [{ path: `/${f.owner.username}/formList` }],
  'GET /:username/forms/:pk/form.xml': (f) => [{ path: `/${f.owner.username}/forms/${f.formId}/form.xml` }],
  'GET /api/v1/data/:formPk': (f) => [{ path: `/api/v1/data/${f.formId}` }],
  'GET /api/v1/data/:formPk/:id': (f) => [{ path: `/api/v1/data/${f.formId}/${f.submissionId}` }],
  'GET /api/v1/merged-datasets/:pk': (f) => [{ path: `/api/v1/merged-datasets/${f.mergedId}` }],
  'GET /api/v1/merged-datasets/:pk/data': (f) => [{ path: `/api/v1/merged-datasets/${f.mergedId}/data` }],
  'GET /api/v1/dataviews/:pk': (f) => [{ path: `/api/v1/dataviews/${f.dataviewId}` }],
  'GET /api/v1/dataviews/:pk/data': (f) => [{ path: `/api/v1/dataviews/${f.dataviewId}/data` }],
  'GET /api/v1/restservices/:pk': (f) => [{ path: `/api/v1/restservices/${f.serviceId}` }],
  'GET /api/v1/restservices/:pk/deliveries': (f) => [{ path: `/api/v1/restservices/${f.serviceId}/deliveries` }],
  'GET /api/v1/restservices/:pk/replays/:id': (f) => [{ path: `/api/v1/restservices/${f.serviceId}/replays/1` }],
  // The record as JSON, and each file streamed (Accept: its type).
  'GET /api/v1/media/:pk': (f) => f.media.flatMap((m) => [{ path: `/api/v1/media/${m.id}` }, { path: `/api/v1/media/${m.id}`, accept: m.mimetype }]),
  'GET /api/v1/files/:pk': (f) => f.media.map((m) => ({ path: `/api/v1/files/${m.id}?filename=${encodeURIComponent(m.filename)}` })),
  // Exports (docs/exports.md): CSV and XLSX of a form, a merged dataset, a dataview; an asynchronous export.
  'GET /api/v1/data/:formPk.csv': (f) => [{ path: `/api/v1/data/${f.formId}.csv` }],
  'GET /api/v1/data/:formPk.xlsx': (f) => [{ path: `/api/v1/data/${f.formId}.xlsx` }],
  'GET /api/v1/merged-datasets/:pk/data.csv': (f) => [{ path: `/api/v1/merged-datasets/${f.mergedId}/data.csv` }],
  'GET /api/v1/merged-datasets/:pk/data.xlsx': (f) => [{ path: `/api/v1/merged-datasets/${f.mergedId}/data.xlsx` }],
  'GET /api/v1/dataviews/:pk/data.csv': (f) => [{ path: `/api/v1/dataviews/${f.dataviewId}/data.csv` }],
  'GET /api/v1/dataviews/:pk/data.xlsx': (f) => [{ path: `/api/v1/dataviews/${f.dataviewId}/data.xlsx` }],
  'GET /api/v1/export/:id': (f) => [{ path: `/api/v1/export/${f.exportId}` }],
  'GET /api/v1/export/:id/download': (f) => [{ path: `/api/v1/export/${f.exportId}/download` }],
  'GET /api/v1/metadata/:pk': (f) => f.formMedia.map((id) => ({ path: `/api/v1/metadata/${id}` })),
  'GET /view/submissionList': (f) => [{ path: `/view/submissionList?formId=${f.idString}` }],
  'GET /:username/view/submissionList': (f) => [{ path: `/${f.owner.username}/view/submissionList?formId=${f.idString}` }],
  'GET /view/downloadSubmission': (f) => [{ path: `/view/downloadSubmission?formId=${encodeURIComponent(`${f.idString}/data[@key=uuid:${f.instanceId}]`)}` }],
  'GET /:username/view/downloadSubmission': (f) => [{ path: `/${f.owner.username}/view/downloadSubmission?formId=${encodeURIComponent(`${f.idString}/data[@key=uuid:${f.instanceId}]`)}` }],
  'GET /xformsManifest/:pk': (f) => [{ path: `/xformsManifest/${f.formId}` }],
  'GET /:username/xformsManifest/:pk': (f) => [{ path: `/${f.owner.username}/xformsManifest/${f.formId}` }],
  'GET /xformsMedia/:pk/:mediaId': (f) => f.formMedia.map((id) => ({ path: `/xformsMedia/${f.formId}/${id}` })),
  'GET /:username/xformsMedia/:pk/:mediaId': (f) => f.formMedia.map((id) => ({ path: `/${f.owner.username}/xformsMedia/${f.formId}/${id}` })),
  'GET /api/v2/entity-lists/:pk': (f) => [{ path: `/api/v2/entity-lists/${f.listId}` }],
  'GET /api/v2/entity-lists/:pk/entities': (f) => [{ path: `/api/v2/entity-lists/${f.listId}/entities` }],
  'GET /api/v2/entity-lists/:pk/entities/:id': (f) => [{ path: `/api/v2/entity-lists/${f.listId}/entities/${f.entityId}` }],
  // An entity list as a file (docs/entities.md): the follow-up form's attachment and the downloads.
  'GET /xformsMedia/:pk/entity-list/:file': (f) => [{ path: `/xformsMedia/${f.lookupFormId}/entity-list/list_${MARK}.csv` }],
  'GET /:username/xformsMedia/:pk/entity-list/:file': (f) => [{ path: `/${f.owner.username}/xformsMedia/${f.lookupFormId}/entity-list/list_${MARK}.csv` }],
  'GET /api/v2/entity-lists/:pk.csv': (f) => [{ path: `/api/v2/entity-lists/${f.listId}.csv` }],
  'GET /api/v2/entity-lists/:pk/download': (f) => [{ path: `/api/v2/entity-lists/${f.listId}/download` }],
  'GET /api/v2/entity-lists/:pk.xlsx': (f) => [{ path: `/api/v2/entity-lists/${f.listId}.xlsx` }],
};

/** Routes that serve stored bytes as they are: each must be seen carrying the marker, so the check cannot pass empty. */
const STORED_BYTES_ROUTES = [
  'GET /api/v1/forms/:pk/form.xml',
  'GET /forms/:pk/form.xml',
  'GET /:username/forms/:pk/form.xml',
  'GET /formList',
  'GET /:username/formList',
  'GET /api/v1/media/:pk',
  'GET /api/v1/files/:pk',
  // CSV carries the answers as text; media.zip stores files uncompressed (XLSX is deflated: its bytes need not show the marker).
  'GET /api/v1/data/:formPk.csv',
  'GET /api/v1/merged-datasets/:pk/data.csv',
  'GET /api/v1/dataviews/:pk/data.csv',
  'GET /api/v1/export/:id/download',
  'GET /api/v1/media.zip',
  'GET /xformsManifest/:pk',
  'GET /:username/xformsManifest/:pk',
  // The stored instance inside the Briefcase <submission> document.
  'GET /view/downloadSubmission',
  'GET /:username/view/downloadSubmission',
  'GET /xformsMedia/:pk/:mediaId',
  'GET /:username/xformsMedia/:pk/:mediaId',
  'GET /xformsMedia/:pk/entity-list/:file',
  'GET /:username/xformsMedia/:pk/entity-list/:file',
  'GET /api/v2/entity-lists/:pk.csv',
  'GET /api/v2/entity-lists/:pk/download',
];

/** An XForm whose title and head carry the marker, with an XHTML script a browser would run inline. */
function markedXForm(idString: string): string {
  return demoXForm(idString, `Survey ${MARK}`).replace('<model>', `<h:script>alert("${MARK}")</h:script>\n    <model>`);
}

describe('hardening: every answer with stored bytes is inert', () => {
  let sut: TestCollectApp;
  let f: Fixture;

  beforeAll(async () => {
    sut = await startTestCollectApp({ AUTH_TOKEN_CACHE_TTL_MS: '0' });
    const owner = await createTestUser(sut.app);
    const api = () => request(sut.url);
    const auth = (r: request.Test) => r.set('Authorization', owner.token);
    const idString = `served_${MARK}`;
    const formId = (await auth(api().post('/api/v1/forms')).set('Content-Type', 'application/xml').send(markedXForm(idString)).expect(201)).body.formid as number;
    const otherId = (await auth(api().post('/api/v1/forms')).set('Content-Type', 'application/xml').send(markedXForm(`${idString}_2`)).expect(201)).body.formid as number;
    // Attachments whose names ask for active types: a zip named x.html, an SVG with a script, text, a photo.
    const zip = Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.from(`<html><script>alert("${MARK}")</script></html>`)]);
    const svg = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert("${MARK}")</script></svg>`);
    const instanceId = randomUUID();
    await auth(api().post('/submission')).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId, idString, name: MARK })), { filename: 'submission.xml', contentType: 'text/xml' })
      .attach('x.html', zip, { filename: 'x.html', contentType: 'text/html' })
      .attach('x.svg', svg, { filename: 'x.svg', contentType: 'image/svg+xml' })
      .attach('notes.txt', Buffer.from(`notes ${MARK}`), { filename: 'notes.txt', contentType: 'text/plain' })
      .attach('house.jpg', await jpeg(), { filename: 'house.jpg', contentType: 'image/jpeg' })
      .expect(201);
    const submissionId = (await auth(api().get(`/api/v1/data/${formId}`)).expect(200)).body[0]._id as number;
    const media = (await auth(api().get(`/api/v1/media?xform=${formId}`)).expect(200)).body as Fixture['media'];
    expect(media.map((m) => m.mimetype).sort()).toEqual(['application/octet-stream', 'application/zip', 'image/jpeg', 'text/plain']);
    const mergedId = (await auth(api().post('/api/v1/merged-datasets')).send({ name: `merged ${MARK}`, xforms: [formId, otherId] }).expect(201)).body.id as number;
    const dataviewId = (await auth(api().post('/api/v1/dataviews')).send({ name: `view ${MARK}`, xform: formId, columns: ['name'], query: [] }).expect(201)).body.id as number;
    const serviceId = (await auth(api().post('/api/v1/restservices')).send({ xform: formId, name: 'generic_json', service_url: `http://127.0.0.1:9/${MARK}` }).expect(201)).body.id as number;
    const appId = (await auth(api().post('/api/v1/oauth-applications')).send({ name: `app ${MARK}`, redirect_uris: 'https://c.example/cb' }).expect(201)).body.id as number;
    // A finished asynchronous export: queued by the API, its file written by the worker's handler (run here).
    const exportId = (await auth(api().post('/api/v1/export')).send({ xform: formId, format: 'csv' }).expect(202)).body.id as string;
    await sut.app.get(ExportRunner).run({ exportId });
    expect((await auth(api().get(`/api/v1/export/${exportId}`)).expect(200)).body).toMatchObject({ status: 'done' });
    // Form media whose names and bytes ask for active types (an HTML page, an SVG with a script) and a CSV lookup.
    const formMedia: number[] = [];
    for (const [name, bytes] of [[`page_${MARK}.html`, `<html><script>alert("${MARK}")</script></html>`], [`img_${MARK}.svg`, svg.toString()], [`lookup_${MARK}.csv`, `name,label\n${MARK},x\n`]]) {
      formMedia.push((await auth(api().post('/api/v1/metadata')).field('xform', String(formId)).field('data_type', 'media').field('data_value', name).attach('data_file', Buffer.from(bytes), name).expect(201)).body.id as number);
    }
    const listId = (await auth(api().post('/api/v2/entity-lists')).send({ name: `list_${MARK}` }).expect(201)).body.id as number;
    const entityId = (await auth(api().post(`/api/v2/entity-lists/${listId}/entities`)).send({ label: `<script>alert("${MARK}")</script>` }).expect(201)).body.id as number;
    const lookup = markedXForm(`${idString}_3`).replace('</instance>', `</instance><instance id="lst" src="jr://file-csv/list_${MARK}.csv"/>`);
    const lookupFormId = (await auth(api().post('/api/v1/forms')).set('Content-Type', 'application/xml').send(lookup).expect(201)).body.formid as number;
    f = { owner, formId, submissionId, instanceId, idString, mergedId, dataviewId, serviceId, appId, exportId, media, formMedia, listId, entityId, lookupFormId };
  });
  afterAll(() => sut.close());

  it('every GET route with parameters has a way to be called', () => {
    const missing = listRoutes(sut.app).filter((r) => r.startsWith('GET ') && r.includes(':') && !CALLS[r]);
    expect(missing).toEqual([]);
  });

  it('answers carrying stored bytes are JSON, our own pages, or inert attachments', async () => {
    // regenerate_auth_token rotates the token every other call uses: last.
    const routes = listRoutes(sut.app).filter((r) => r.startsWith('GET ')).sort((a, b) => Number(a.includes('regenerate')) - Number(b.includes('regenerate')));
    const problems: string[] = [];
    const carrying = new Set<string>();
    let answers = 0;
    for (const route of routes) {
      const calls = CALLS[route]?.(f) ?? [{ path: route.slice(4) }];
      for (const call of calls) {
        const req = request(sut.url).get(call.path).set('Authorization', f.owner.token).buffer(true).parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        });
        const res = await (call.accept ? req.set('Accept', call.accept) : req);
        answers++;
        const body = res.body as Buffer;
        if (!body.includes(MARK)) continue;
        const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        const where = `${route} (${call.path}${call.accept ? `, Accept ${call.accept}` : ''}) ${res.status} ${type}`;
        if (res.headers['x-content-type-options'] !== 'nosniff') problems.push(`${where}: no nosniff`);
        if (type === 'application/json') continue;
        if (type === 'text/html') {
          const csp = String(res.headers['content-security-policy'] ?? '');
          if (!csp.includes("default-src 'none'") || /script-src/.test(csp)) problems.push(`${where}: an HTML page without its strict CSP`);
          continue;
        }
        carrying.add(route);
        if (res.headers['content-security-policy'] !== INERT_CSP) problems.push(`${where}: CSP is ${res.headers['content-security-policy']}`);
        if (!String(res.headers['content-disposition'] ?? '').startsWith('attachment')) problems.push(`${where}: not an attachment`);
        if (['text/html', 'image/svg+xml', 'application/xhtml+xml'].includes(type)) problems.push(`${where}: an active type`);
      }
    }
    expect(problems).toEqual([]);
    expect(STORED_BYTES_ROUTES.filter((r) => !carrying.has(r))).toEqual([]);
    console.log(`served content: ${routes.length} GET routes, ${answers} answers, ${carrying.size} routes serving stored bytes inert: ${[...carrying].sort().join(', ')}`);
  });

  it('a stored active type (rows written before the sniffing fix) is served as application/octet-stream', async () => {
    const zip = f.media.find((m) => m.mimetype === 'application/zip')!;
    await sut.app.get(DataSource).query(`UPDATE attachments SET mimetype = 'text/html' WHERE id = $1`, [zip.id]);
    const res = await request(sut.url).get(`/api/v1/files/${zip.id}?filename=${encodeURIComponent(zip.filename)}`).set('Authorization', f.owner.basic).expect(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers['content-security-policy']).toBe(INERT_CSP);
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="x.html"/);
  });
});
