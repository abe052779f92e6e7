import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { engineNode, engineNodes, followUpXForm, installDom, lookupXForm, plainXForm, registrationSubmission, registrationXForm, type EngineNode } from './entity-forms.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * Follow-up forms and their list attachment, end to end (docs/entities.md, "Follow-up forms and
 * their list attachment"): a registration form creates entities from OpenRosa submissions; a
 * follow-up form that loads `trees.csv` gets the list in its manifest (`type="entityList"`);
 * ODK Web Forms' engine (@getodk/xforms-engine) loads the follow-up form with the served CSV,
 * offers the entities as choices, and the submission it serializes updates the entity.
 */
const tag = (xml: string, name: string) => [...xml.matchAll(new RegExp(`<${name}>([^<]*)</${name}>`, 'g'))].map((m) => m[1].replace(/&amp;/g, '&'));

interface ListedFile {
  filename: string;
  hash: string;
  url: string;
  type: string | null;
}

function manifestFiles(xml: string): ListedFile[] {
  return [...xml.matchAll(/<mediaFile( type="([^"]*)")?>(.*?)<\/mediaFile>/g)].map((m) => ({
    type: m[2] ?? null, filename: tag(m[3], 'filename')[0], hash: tag(m[3], 'hash')[0], url: tag(m[3], 'downloadUrl')[0],
  }));
}

describe('follow-up forms get their entity list as a generated attachment', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let stranger: TestUser;
  let engine: typeof import('@getodk/xforms-engine');
  let registrationId: number;
  let followUpId: number;
  let listId: number;
  const trees = [
    { uuid: randomUUID(), species: 'Oak', circumference: 40 },
    { uuid: randomUUID(), species: 'Ash', circumference: 12 },
    { uuid: randomUUID(), species: 'Elm, "the old one"', circumference: 95 },
  ];
  const auth = (u: TestUser = owner) => ({ Authorization: u.token });
  const follow = (url: string, headers: Record<string, string> = {}) => fetch(url.replace(sut.config.PUBLIC_BASE_URL, sut.url), { headers: { ...auth(), ...headers } });
  const publish = async (xml: string) => (await request(sut.url).post('/api/v1/forms').set(auth()).attach('xml_file', Buffer.from(xml), 'form.xml').expect(201)).body.formid as number;
  const submit = (xml: string) => request(sut.url).post('/submission').set(auth()).set('X-OpenRosa-Version', '1.0').attach('xml_submission_file', Buffer.from(xml), 'submission.xml');
  const manifest = async (formId = followUpId) => manifestFiles(await (await follow(`${sut.url}/xformsManifest/${formId}`)).text());
  const listFile = async (formId = followUpId) => (await manifest(formId)).find((f) => f.type === 'entityList');

  beforeAll(async () => {
    installDom();
    engine = await import('@getodk/xforms-engine');
    sut = await startTestCollectApp();
    owner = await createTestUser(sut.app);
    stranger = await createTestUser(sut.app);
    registrationId = await publish(registrationXForm());
    for (const t of trees) await submit(registrationSubmission({ ...t, instanceId: randomUUID() })).expect(201);
    followUpId = await publish(followUpXForm());
    const [row] = (await sut.app.get(DataSource).query(`SELECT id FROM entity_lists WHERE owner_id = $1 AND name = 'trees'`, [owner.id])) as Array<{ id: number }>;
    listId = row.id;
  }, 120_000);
  afterAll(() => sut?.close());

  it('lists the follow-up form with a manifest whose entityList file is the CSV of the live entities', async () => {
    const list = await (await follow(`${sut.url}/formList`)).text();
    const entry = list.split('<xform>').find((x) => x.includes('<formID>tree_followup</formID>'))!;
    expect(tag(entry, 'manifestUrl')).toEqual([`${sut.config.PUBLIC_BASE_URL}/xformsManifest/${followUpId}`]);
    const files = await manifest();
    expect(files).toEqual([{ type: 'entityList', filename: 'trees.csv', hash: expect.stringMatching(/^md5:[0-9a-f]{32}$/), url: `${sut.config.PUBLIC_BASE_URL}/xformsMedia/${followUpId}/entity-list/trees.csv` }]);
    // The registration form loads no list: no manifest entry.
    expect(await manifest(registrationId)).toEqual([]);

    const res = await follow(files[0].url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="trees.csv"');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('etag')).toBe(`"${files[0].hash}"`);
    const csv = await res.text();
    const lines = csv.trimEnd().split('\n');
    expect(lines[0]).toBe('name,label,__version,species,circumference_cm');
    expect(lines.slice(1)).toEqual([
      `${trees[0].uuid},Oak 40cm,1,Oak,40`,
      `${trees[1].uuid},Ash 12cm,1,Ash,12`,
      `${trees[2].uuid},"Elm, ""the old one"" 95cm",1,"Elm, ""the old one""",95`,
    ]);
    // The same file under the owner-scoped URLs.
    const owned = manifestFiles(await (await follow(`${sut.url}/${owner.username}/xformsManifest/${followUpId}`)).text());
    expect(owned[0].url).toBe(`${sut.config.PUBLIC_BASE_URL}/${owner.username}/xformsMedia/${followUpId}/entity-list/trees.csv`);
    expect(await (await follow(owned[0].url)).text()).toBe(csv);
  });

  it('the engine loads the follow-up form with the served list, offers the entities, and its submission updates the entity', async () => {
    const xml = await (await follow(`${sut.url}/forms/${followUpId}/form.xml`)).text();
    const files = new Map((await manifest()).map((f) => [f.filename, f]));
    const loaded = await engine.loadForm(xml, {
      fetchFormAttachment: async (url: URL) => {
        const file = files.get(url.href.slice(url.href.lastIndexOf('/') + 1));
        return file ? follow(file.url) : new Response('', { status: 404 });
      },
    });
    expect([loaded.status, loaded.error?.message]).toEqual(['success', undefined]);
    const root = loaded.createInstance().root as unknown as EngineNode & { prepareInstancePayload(): Promise<{ status: string; data: FormData[] }> };
    const tree = engineNode(root, '/data/tree');
    expect(tree.currentState.valueOptions!.map((o) => [o.value, o.label?.asString])).toEqual(trees.map((t) => [t.uuid, `${t.species} ${t.circumference}cm`]));
    tree.selectValue!(trees[1].uuid);
    engineNode(root, '/data/circumference').setValue!(15);
    const payload = await root.prepareInstancePayload();
    expect(payload.status).toBe('ready');
    const instance = await (payload.data[0].get('xml_submission_file') as File).text();
    // The engine computed the entity block from the list: the id and the version it saw.
    expect(instance).toMatch(new RegExp(`<entity [^>]*baseVersion="1"[^>]*id="${trees[1].uuid}"[^>]*update="1"`));
    expect(engineNodes(root).length).toBeGreaterThan(3);

    const before = (await listFile())!.hash;
    const posted = await fetch(`${sut.url}/submission`, { method: 'POST', headers: { ...auth(), 'X-OpenRosa-Version': '1.0' }, body: payload.data[0] });
    expect([posted.status, await posted.text()]).toEqual([201, expect.stringContaining('submit_success')]);

    const entities = (await request(sut.url).get(`/api/v2/entity-lists/${listId}/entities`).set(auth()).expect(200)).body as Array<{ uuid: string; version: number; data: Record<string, string> }>;
    const updated = entities.find((e) => e.uuid === trees[1].uuid)!;
    expect(updated).toMatchObject({ version: 2, data: { circumference_cm: '15', species: 'Ash' } });
    // The list changed: a new hash, and the CSV shows the new version.
    const after = (await listFile())!;
    expect(after.hash).not.toBe(before);
    expect(await (await follow(after.url)).text()).toContain(`${trees[1].uuid},Ash 12cm,2,Ash,15`);
  });

  it('the hash stays while nothing of the list changes, and an unchanged list answers 304 without a body', async () => {
    const first = (await listFile())!;
    // Submissions that touch no entity, and another list, leave it alone.
    const otherList = await publish(registrationXForm('bush_registration', 'bushes'));
    await submit(registrationSubmission({ uuid: randomUUID(), species: 'Box', circumference: 3, instanceId: randomUUID(), idString: 'bush_registration' }).replace('dataset="trees"', 'dataset="bushes"')).expect(201);
    expect(otherList).toBeGreaterThan(0);
    expect((await listFile())!.hash).toBe(first.hash);
    const notModified = await follow(first.url, { 'If-None-Match': `"${first.hash}"` });
    expect([notModified.status, await notModified.text()]).toEqual([304, '']);
    const stale = await follow(first.url, { 'If-None-Match': '"md5:00000000000000000000000000000000"' });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();
  });

  it('the hash changes with each create, update and delete, and when the list gains a property', async () => {
    const seen = new Set([(await listFile())!.hash]);
    const step = async (what: string, change: () => Promise<unknown>) => {
      await change();
      const hash = (await listFile())!.hash;
      expect([what, seen.has(hash)]).toEqual([what, false]);
      seen.add(hash);
    };
    const uuid = randomUUID();
    await step('a registration', () => submit(registrationSubmission({ uuid, species: 'Yew', circumference: 7, instanceId: randomUUID() })).expect(201));
    const [created] = (await sut.app.get(DataSource).query(`SELECT id FROM entities WHERE uuid = $1`, [uuid])) as Array<{ id: number }>;
    await step('an API update', () => request(sut.url).patch(`/api/v2/entity-lists/${listId}/entities/${created.id}`).set(auth()).send({ data: { circumference_cm: '8' } }).expect(200));
    await step('an API create', () => request(sut.url).post(`/api/v2/entity-lists/${listId}/entities`).set(auth()).send({ label: 'Pine', data: { species: 'Pine' } }).expect(201));
    await step('a delete', () => request(sut.url).delete(`/api/v2/entity-lists/${listId}/entities/${created.id}`).set(auth()).expect(204));
    await step('a new property', () => publish(registrationXForm('tree_registration_2').replace('<circumference/>', '<circumference/><height/>').replace('<bind nodeset="/data/circumference"', '<bind nodeset="/data/height" type="int" entities:saveto="height_m"/><bind nodeset="/data/circumference"')));
    const csv = await (await follow((await listFile())!.url)).text();
    expect(csv.split('\n')[0]).toBe('name,label,__version,species,circumference_cm,height_m');
    expect(csv).not.toContain(uuid);
  });

  it('a form that loads a CSV its owner has no list for gets no list file; others may not read it', async () => {
    // A form that only looks the list up (no entity block) gets it too.
    const lookup = await publish(lookupXForm('tree_lookup', 'trees'));
    expect((await manifest(lookup)).map((f) => [f.type, f.filename])).toEqual([['entityList', 'trees.csv']]);
    const orphan = await publish(lookupXForm('orphan_lookup', 'unknown_list'));
    expect(await manifest(orphan)).toEqual([]);
    expect((await follow(`${sut.url}/xformsMedia/${orphan}/entity-list/unknown_list.csv`)).status).toBe(404);
    expect((await follow(`${sut.url}/xformsMedia/${followUpId}/entity-list/bushes.csv`)).status).toBe(404);
    expect((await follow(`${sut.url}/xformsMedia/${followUpId}/entity-list/trees.csv`, { Authorization: stranger.token })).status).toBe(404);
    // A form of the same shape that names no list: no manifest entries, no query of lists.
    const plain = await publish(plainXForm());
    expect(await manifest(plain)).toEqual([]);
  });
});
