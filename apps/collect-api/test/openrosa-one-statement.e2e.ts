import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { listFiles } from './data-fixtures.js';
import { demoInstance, demoXForm } from './forms-fixtures.js';
import { FAST_FORWARDING, until, type Receiver } from './restservices-receiver.js';
import { withWorkerAppAndReceiver } from './restservice-suite.js';
import type { TestCollectApp } from './test-app.js';
import type { TestUser } from './test-users.js';

type Parts = Record<'house.jpg' | 'yard.png' | 'voice.wav', Buffer>;

/**
 * A new OpenRosa instance whose attachments are all in one small POST is stored by ONE
 * statement: files first, each at a storage path claimed by creating its file, then the instance,
 * its attachment rows and its outbox rows together (docs/forms.md, "Intake: caches and one
 * statement", "Attachment storage paths"). Real PostgreSQL, Redis, worker and a local receiver.
 */
describe('OpenRosa intake: one statement for an instance with its attachments', () => {
  const mediaRoot = mkdtempSync(join(tmpdir(), 'collect-or-one-'));
  let sut: TestCollectApp;
  let owner: TestUser;
  let rx: Receiver;
  // A media wait far longer than the test: a forward that comes at all came without waiting.
  withWorkerAppAndReceiver(
    { ...FAST_FORWARDING, FORWARD_RELAY_INTERVAL_MS: '100', FORWARD_MEDIA_WAIT_SECONDS: '600', MEDIA_ROOT: mediaRoot, ATTACHMENT_MAX_BYTES: '200000' },
    (suite) => void ({ sut, owner, rx } = suite),
  );

  const api = () => request(sut.url);
  const newForm = async (idString: string) =>
    (await api().post('/api/v1/forms').set('Authorization', owner.token).attach('xml_file', Buffer.from(demoXForm(idString)), 'form.xml').expect(201)).body.formid as number;
  const parts = (size = 2000): Parts => ({ 'house.jpg': randomBytes(size), 'yard.png': randomBytes(size), 'voice.wav': randomBytes(size) });
  const post = (idString: string, uuid: string, files: Partial<Parts>, extra: Array<[string, Buffer]> = []) => {
    let req = api().post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0')
      .attach('xml_submission_file', Buffer.from(demoInstance({ instanceId: uuid, idString })), { filename: 'submission.xml', contentType: 'text/xml' });
    for (const [name, data] of [...Object.entries(files), ...extra] as Array<[string, Buffer]>) req = req.attach(name, data, { filename: name, contentType: 'application/octet-stream' });
    return req;
  };
  const attachmentsOf = async (formId: number, uuid: string) => {
    const rows = (await api().get(`/api/v1/data/${formId}`).query({ page_size: 10000 }).set('Authorization', owner.token).expect(200)).body as Array<{ _uuid: string; _attachments: Array<{ name: string; filename: string }> }>;
    return new Map(rows.find((r) => r._uuid === uuid)!._attachments.map((a) => [a.name, a.filename]));
  };
  const formDir = (formId: number, idString: string) => join(mediaRoot, owner.username, 'attachments', `${formId}_${idString}`);
  const filesUnder = (dir: string) => listFiles(dir).map((f) => relative(mediaRoot, f)).sort();
  const liveFilenames = async (formId: number) =>
    ((await sut.app.get(DataSource).query(`SELECT filename FROM attachments WHERE form_id = $1 ORDER BY filename`, [formId])) as Array<{ filename: string }>).map((r) => r.filename);

  it('its forward carries every attachment at once: the outbox rows of the statement see its attachment rows', async () => {
    const formId = await newForm('one_forward');
    await api().post('/api/v1/restservices').set('Authorization', owner.token).send({ xform: formId, name: 'generic_json', service_url: `${rx.url}/one` }).expect(201);
    const uuid = randomUUID();
    await post('one_forward', uuid, parts()).expect(201);
    const [sent] = await until('the forward', () => rx.to('/one').length >= 1 && rx.to('/one'));
    const body = JSON.parse(sent.body.toString()) as { _uuid: string; _attachments: Array<{ name: string; filename: string }> };
    expect(body._uuid).toBe(uuid);
    expect(body._attachments.map((a) => a.name).sort()).toEqual(['house.jpg', 'voice.wav', 'yard.png']);
    const stored = await attachmentsOf(formId, uuid);
    expect(body._attachments.map((a) => a.filename).sort()).toEqual([...stored.values()].sort());
  });

  it('a file left at a plain path without a row is not overwritten: the new file is stored under a suffix', async () => {
    const formId = await newForm('one_left');
    const dir = formDir(formId, 'one_left');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'house.jpg'), 'left behind');
    const uuid = randomUUID();
    const sent = parts();
    await post('one_left', uuid, sent).expect(201);
    const stored = await attachmentsOf(formId, uuid);
    expect(stored.get('house.jpg')).toMatch(new RegExp(`/${formId}_one_left/house-[0-9a-f]{8}\\.jpg$`));
    expect(stored.get('yard.png')).toBe(`${owner.username}/attachments/${formId}_one_left/yard.png`);
    for (const [name, data] of Object.entries(sent)) expect(readFileSync(join(mediaRoot, stored.get(name)!)).equals(data)).toBe(true);
    expect(readFileSync(join(dir, 'house.jpg'), 'utf8')).toBe('left behind');
  });

  it('a row whose file was removed by hand: nothing is half stored, the submission goes in under suffixed paths, no file is left over', async () => {
    const formId = await newForm('one_gone');
    const first = randomUUID();
    await post('one_gone', first, parts()).expect(201);
    const firstFiles = await attachmentsOf(formId, first);
    rmSync(join(mediaRoot, firstFiles.get('house.jpg')!));
    const second = randomUUID();
    const sent = parts();
    await post('one_gone', second, sent).expect(201);
    const stored = await attachmentsOf(formId, second);
    expect(stored.size).toBe(3);
    for (const [name, data] of Object.entries(sent)) {
      expect(stored.get(name)).not.toBe(firstFiles.get(name));
      expect(readFileSync(join(mediaRoot, stored.get(name)!)).equals(data)).toBe(true);
    }
    // Every file on disk belongs to a row (the one-statement attempt removed the files it wrote).
    expect(filesUnder(formDir(formId, 'one_gone'))).toEqual((await liveFilenames(formId)).filter((f) => f !== firstFiles.get('house.jpg')));
  });

  it('concurrent submissions of the same file names, held in memory and spooled: each record keeps its own bytes', async () => {
    const formId = await newForm('one_mixed');
    const small = Array.from({ length: 8 }, () => ({ uuid: randomUUID(), files: parts() }));
    // Past IN_MEMORY_REQUEST_BYTES (openrosa/multipart.ts): spooled, the transactional path.
    const big = Array.from({ length: 2 }, () => ({ uuid: randomUUID(), files: parts(190_000), extra: [0, 1, 2, 3].map((i) => [`part${i}.bin`, randomBytes(190_000)] as [string, Buffer]) }));
    const answers = await Promise.all([
      ...small.map((s) => post('one_mixed', s.uuid, s.files).then((r) => r.status)),
      ...big.map((b) => post('one_mixed', b.uuid, b.files, b.extra).then((r) => r.status)),
    ]);
    expect(answers).toEqual(Array(10).fill(201));
    const paths = new Set<string>();
    for (const s of [...small, ...big]) {
      const stored = await attachmentsOf(formId, s.uuid);
      for (const [name, data] of Object.entries(s.files)) {
        paths.add(stored.get(name)!);
        expect(readFileSync(join(mediaRoot, stored.get(name)!)).equals(data)).toBe(true);
      }
    }
    expect(paths.size).toBe(30);
    expect(filesUnder(formDir(formId, 'one_mixed'))).toEqual(await liveFilenames(formId));
  });
});
