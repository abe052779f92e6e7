import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import type pg from 'pg';
import request from 'supertest';
import { demoXForm } from './forms-fixtures.js';
import { encryptSubmission } from './odk-encryptor.js';
import { busyConnections, eventually, watcher } from './slow-readers.js';
import { startTestCollectApp, type TestCollectApp } from './test-app.js';
import { createTestUser, type TestUser } from './test-users.js';

/**
 * The decrypt export as a streamed read (docs/security.md, "Streamed reads and heavy queries";
 * docs/encryption.md "Decrypting without a server-held key"): clients that stop reading a large
 * decrypted ZIP hold at most their read slots, the API answers others meanwhile, and the stall
 * deadline closes them and gives everything back.
 */
describe('decrypt export: clients that stop reading', () => {
  let sut: TestCollectApp;
  let owner: TestUser;
  let db: pg.Client;
  let pk: number;
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;

  beforeAll(async () => {
    sut = await startTestCollectApp({ READ_POOL_SIZE: '3', READS_PER_USER: '2', READ_SLOT_WAIT_MS: '0', STREAM_STALL_TIMEOUT_MS: '2000' });
    owner = await createTestUser(sut.app);
    const id = `slowdec${process.pid}`;
    pk = (await request(sut.url).post('/api/v1/forms').set('Authorization', owner.token).set('Content-Type', 'application/xml').send(demoXForm(id)).expect(201)).body.formid as number;
    await request(sut.url).post(`/api/v1/forms/${pk}/encryption`).set('Authorization', owner.token).send({ mode: 'self', public_key: pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64') }).expect(201);
    const version = /<data id="[^"]*" version="([^"]*)"/.exec((await request(sut.url).get(`/api/v1/forms/${pk}/form.xml`).set('Authorization', owner.token).expect(200)).text)![1]!;
    const instanceId = randomUUID();
    // 12 MB of photo: far more than the socket buffers hold.
    const env = encryptSubmission({
      publicKey: pair.publicKey, formId: id, version, instanceId, media: [{ name: 'house.jpg', bytes: randomBytes(12 * 1024 * 1024) }],
      submissionXml: `<?xml version="1.0"?><data id="${id}" version="${version}"><name>A</name><household><photo>house.jpg</photo></household><meta><instanceID>uuid:${instanceId}</instanceID></meta></data>`,
    });
    let req = request(sut.url).post('/submission').set('Authorization', owner.token).set('X-OpenRosa-Version', '1.0').attach('xml_submission_file', Buffer.from(env.manifest), 'submission.xml');
    for (const [name, bytes] of env.parts) req = req.attach(name, bytes, name);
    await req.expect(201);
    db = await watcher(sut.config.DATABASE_URL);
  }, 120_000);
  afterAll(async () => {
    await db?.end();
    await sut?.close();
  });

  /** A raw POST of the decrypt request whose answer is never read past its first bytes. */
  function stalledDecrypt() {
    const url = new URL(sut.url);
    const body = JSON.stringify({ private_key: pem, format: 'zip' });
    const socket = connect({ host: url.hostname, port: Number(url.port) });
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const status = new Promise<number>((resolve) => {
      socket.once('connect', () => socket.write(`POST /api/v1/forms/${pk}/decrypt HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${owner.token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`));
      socket.once('data', (chunk: Buffer) => {
        const code = Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0);
        if (code === 200) socket.pause();
        else socket.end();
        resolve(code);
      });
      setTimeout(() => resolve(0), 30_000).unref();
    });
    return { socket, closed, status };
  }

  it('three stalled readers: two stream, one is refused; the API answers; the deadline closes them', async () => {
    const readers = [0, 1, 2].map(() => stalledDecrypt());
    const statuses = await Promise.all(readers.map((r) => r.status));
    expect(statuses.filter((s) => s === 200)).toHaveLength(2);
    expect(statuses.filter((s) => s === 429)).toHaveLength(1);
    expect((await request(sut.url).get('/health/ready').timeout(20_000)).status).toBe(200);
    await request(sut.url).get(`/api/v1/forms/${pk}`).set('Authorization', owner.token).timeout(20_000).expect(200);
    expect((await busyConnections(db)).total).toBeLessThanOrEqual(3);
    // The stall deadline destroys the stalled answers' sockets: their slots come back (the same
    // user may read again), and no database connection stays held.
    const slot = () => request(sut.url).get(`/api/v1/data/${pk}.csv`).set('Authorization', owner.token).timeout(20_000).then((r) => r.status);
    expect(await eventually(slot, (status) => status === 200, 30_000)).toBe(200);
    expect((await eventually(() => busyConnections(db), (c) => c.total === 0, 30_000)).total).toBe(0);
    for (const r of readers) r.socket.destroy();
    await Promise.all(readers.map((r) => r.closed));
    // The same request streams to the end.
    const again = await request(sut.url).post(`/api/v1/forms/${pk}/decrypt`).set('Authorization', owner.token).send({ private_key: pem, format: 'zip' }).buffer(true).parse((res, cb) => {
      let n = 0;
      res.on('data', (c: Buffer) => (n += c.length));
      res.on('end', () => cb(null, n));
    });
    expect(again.status).toBe(200);
    expect(again.body as number).toBeGreaterThan(12 * 1024 * 1024);
  }, 120_000);
});
