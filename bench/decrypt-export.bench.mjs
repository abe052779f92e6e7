// Decrypt export of encrypted submissions (docs/encryption.md "Decrypting without a server-held key"):
// N submissions with a 100 KB photo each are sent through the real OpenRosa intake twice, to a
// form with a self-mode key (as phones encrypt them) and to a plaintext twin; then
// - POST /api/v1/forms/{pk}/decrypt {"private_key", "format": "zip"} time ÷ GET /api/v1/media.zip
//   of the twin's same photos (goal <= 2), both read to the end by one client;
// - peak RSS growth of the API process during the decrypt export (goal < 64 MB).
// N: BENCH_DECRYPT_N (default 10,000, the goal's size; both exports stream one submission at a
// time, so a smaller N, e.g. 1,000 for a quick look, gives about the same ratio and memory).
// Rounds: BENCH_DECRYPT_ROUNDS measured rounds of each export after one warm-up (default 2), each
// once the API is quiet; each prints its CPU per submission by kind (docs/benchmarks.md).
// BENCH_CPU_PROF=<dir> profiles the API; windows: media, decrypt (the measured rounds).
import { execFileSync } from 'node:child_process';
import { constants, createCipheriv, createHash, generateKeyPairSync, publicEncrypt, randomBytes, randomUUID } from 'node:crypto';
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { createRequire } from 'node:module';
import { cpuOf, must, postgresCpu, postmasterPidOf, profiled, report, rssGrowthDuring, sleep, startCollect, threadCpu, userToken, writeProfileWindows } from './bench-helpers.mjs';

const N = Number(process.env.BENCH_DECRYPT_N ?? 10_000);
const ROUNDS = Number(process.env.BENCH_DECRYPT_ROUNDS ?? 2);
const PHOTO_BYTES = 100_000;
/** Seeding requests on their way at once: enough to keep the intake busy on two cores. */
const IN_FLIGHT = 8;

const xform = (id) => `<?xml version="1.0"?>
<h:html xmlns="http://www.w3.org/2002/xforms" xmlns:h="http://www.w3.org/1999/xhtml" xmlns:jr="http://openrosa.org/javarosa">
  <h:head><h:title>${id}</h:title><model>
    <instance><data id="${id}" version="1"><name/><age/><photo/><meta><instanceID/></meta></data></instance>
    <bind nodeset="/data/name" type="string"/><bind nodeset="/data/age" type="int"/><bind nodeset="/data/photo" type="binary"/>
    <bind nodeset="/data/meta/instanceID" type="string" readonly="true()" jr:preload="uid"/>
  </model></h:head>
  <h:body><input ref="/data/name"><label>Name</label></input><input ref="/data/age"><label>Age</label></input><upload ref="/data/photo" mediatype="image/*"><label>Photo</label></upload></h:body>
</h:html>`;
const instance = (id, version, uuid, i) => `<?xml version="1.0"?><data id="${id}" version="${version}"><name>Person ${i}</name><age>${20 + (i % 60)}</age><photo>photo.jpg</photo><meta><instanceID>uuid:${uuid}</instanceID></meta></data>`;

/** ODK Collect's envelope (RSA-OAEP SHA-256 wrapping, MD5 IV seed bumped per file, AES-256-CFB/PKCS5), as the phone makes it. */
function envelope(publicKey, formId, version, uuid, xml, photo) {
  const key = randomBytes(32);
  const wrap = (data) => publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, data).toString('base64');
  const seed = createHash('md5').update(`uuid:${uuid}`, 'utf8').update(key).digest();
  const encrypt = (i, plain) => {
    seed[i % 16] = (seed[i % 16] + 1) & 0xff;
    const pad = 16 - (plain.length % 16);
    const c = createCipheriv('aes-256-cfb', key, Buffer.from(seed));
    return Buffer.concat([c.update(Buffer.concat([plain, Buffer.alloc(pad, pad)])), c.final()]);
  };
  const parts = { 'photo.jpg.enc': encrypt(0, photo), 'submission.xml.enc': encrypt(1, Buffer.from(xml)) };
  const encryptedKey = wrap(key);
  const md5 = (b) => createHash('md5').update(b).digest('hex');
  const signed = [formId, version, encryptedKey, `uuid:${uuid}`, `photo.jpg::${md5(photo)}`, `submission.xml::${md5(Buffer.from(xml))}`].map((l) => `${l}\n`).join('');
  const manifest = `<data xmlns="http://www.opendatakit.org/xforms/encrypted" id="${formId}" version="${version}" encrypted="yes"><base64EncryptedKey>${encryptedKey}</base64EncryptedKey><meta xmlns="http://openrosa.org/xforms"><instanceID>uuid:${uuid}</instanceID></meta><media><file>photo.jpg.enc</file></media><encryptedXmlFile>submission.xml.enc</encryptedXmlFile><base64EncryptedElementSignature>${wrap(createHash('md5').update(signed).digest())}</base64EncryptedElementSignature></data>`;
  return { manifest, parts };
}

async function submit(base, token, xml, files) {
  const body = new FormData();
  body.append('xml_submission_file', new Blob([xml], { type: 'text/xml' }), 'submission.xml');
  for (const [name, bytes] of Object.entries(files)) body.append(name, new Blob([bytes], { type: 'application/octet-stream' }), name);
  await must(fetch(`${base}/submission`, { method: 'POST', headers: { authorization: token, 'X-OpenRosa-Version': '1.0' }, body }), 201);
}

const pg = createRequire(new URL('../apps/collect-api/package.json', import.meta.url))('pg');

/** CPU µs so far: the API's threads by kind, the PostgreSQL server's (`postmaster`: its pid), and this client's. */
function cpuNow(pid, postmaster) {
  const client = process.cpuUsage();
  return { ...threadCpu(pid), pg: postgresCpu(postmaster), client: client.user + client.system };
}

/**
 * Waits until the API process is quiet (under 3 % of a core over 300 ms, at most 10 s), so that a
 * round does not pay for the garbage collection of the one before it: V8 finishes marking and
 * sweeping what the previous export left after it answered, and those threads' CPU otherwise fell
 * in whichever export came next (0.02 to 0.46 ms per submission of V8's helper threads in the
 * plaintext archive's windows, after a decrypt).
 */
async function settled(pid) {
  for (const end = Date.now() + 10_000; Date.now() < end; ) {
    const before = cpuOf(pid);
    await sleep(300);
    if (cpuOf(pid) - before < 9_000) return;
  }
}

/**
 * Reads a response to the end; answers the bytes and the seconds from the request to the last
 * byte, sampling `pid`'s RSS meanwhile, and the CPU spent meanwhile (cpuNow's kinds, in µs).
 */
async function drain(pid, postmaster, request) {
  // No dirty pages left: the seeding's 2 GB of files (or a round's writes) are not written back
  // during a round, by the kernel's threads beside it (as encrypted-intake's windows).
  execFileSync('sync');
  await settled(pid);
  const before = cpuNow(pid, postmaster);
  const { value: bytes, seconds, growthMb } = await rssGrowthDuring(pid, async () => {
    const res = await must(request(), 200);
    let bytes = 0;
    for await (const chunk of res.body) bytes += chunk.length;
    return bytes;
  });
  const after = cpuNow(pid, postmaster);
  const cpu = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
  return { bytes, seconds, growthMb, cpu };
}

/** The round's CPU per submission in ms, by kind, and its share of the two cores' time. */
function cpuText({ cpu, seconds }) {
  const total = Object.values(cpu).reduce((a, b) => a + b, 0);
  const parts = Object.entries(cpu).map(([k, us]) => `${k} ${(us / N / 1000).toFixed(2)}`);
  return `CPU per submission (ms): ${parts.join(', ')}; all ${(total / N / 1000).toFixed(2)}, ${((100 * total) / 1e6 / seconds / 2).toFixed(0)} % of two cores`;
}

const postgres = await startPostgres({ fast: true });
const redis = await startRedis();
let collect;
try {
  collect = await startCollect({ pg: postgres, redis, database: 'bench_decrypt_export', env: { RATE_LIMIT_DECRYPT_PER_FORM: '1000' } });
  const base = collect.url;
  const token = await userToken(base);
  const auth = { authorization: token };
  const upload = async (id) => (await (await must(fetch(`${base}/api/v1/forms`, { method: 'POST', headers: { ...auth, 'content-type': 'application/xml' }, body: xform(id) }), 201)).json()).formid;
  const encrypted = await upload('bench_encrypted');
  const plain = await upload('bench_plain');
  const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const spki = pair.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
  await must(fetch(`${base}/api/v1/forms/${encrypted}/encryption`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'self', public_key: spki }) }), 201);
  const formXml = await (await must(fetch(`${base}/api/v1/forms/${encrypted}/form.xml`, { headers: auth }), 200)).text();
  const version = /<data id="bench_encrypted" version="([^"]+)"/.exec(formXml)[1];

  const t0 = Date.now();
  let next = 0;
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    for (let i = next++; i < N; i = next++) {
      const photo = randomBytes(PHOTO_BYTES);
      const uuid = randomUUID();
      const env = envelope(pair.publicKey, 'bench_encrypted', version, uuid, instance('bench_encrypted', version, uuid, i), photo);
      await submit(base, token, env.manifest, env.parts);
      await submit(base, token, instance('bench_plain', '1', randomUUID(), i), { 'photo.jpg': photo });
    }
  }));
  console.log(`seeded ${N} encrypted and ${N} plaintext submissions with a ${PHOTO_BYTES / 1000} KB photo each through the intake in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

  const pid = collect.api.child.pid;
  const postmaster = await postmasterPidOf(pg, postgres.adminUrl);
  const privateKey = pair.privateKey.export({ format: 'pem', type: 'pkcs8' });
  const decrypt = () => fetch(`${base}/api/v1/forms/${encrypted}/decrypt`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ private_key: privateKey, format: 'zip' }) });
  const archive = () => fetch(`${base}/api/v1/media.zip?xform=${plain}`, { headers: auth });
  // One warm-up of each, then the better of ROUNDS rounds each (a shared machine's noise only adds time).
  await drain(pid, postmaster, archive);
  await drain(pid, postmaster, decrypt);
  const rounds = { decrypt: [], archive: [] };
  for (let r = 0; r < ROUNDS; r++) {
    rounds.archive.push(await profiled('media', () => drain(pid, postmaster, archive)));
    rounds.decrypt.push(await profiled('decrypt', () => drain(pid, postmaster, decrypt)));
  }
  const best = (xs) => xs.reduce((a, b) => (b.seconds < a.seconds ? b : a));
  const d = best(rounds.decrypt);
  const a = best(rounds.archive);
  if (d.bytes < N * PHOTO_BYTES || a.bytes < N * PHOTO_BYTES) throw new Error(`short archives: decrypted ${d.bytes} bytes, plaintext ${a.bytes} bytes`);
  console.log(`decrypt zip of ${N}: ${d.seconds.toFixed(2)} s, ${(d.bytes / 1e6).toFixed(0)} MB; plaintext media.zip: ${a.seconds.toFixed(2)} s, ${(a.bytes / 1e6).toFixed(0)} MB`);
  console.log(`  decrypt zip ${cpuText(d)}`);
  console.log(`  plaintext media.zip ${cpuText(a)}`);
  report(`ratio decrypt-zip-time/media-zip-time (${N} submissions, 100 KB photo each)`, d.seconds / a.seconds, { goal: '<= 2' });
  report(`decrypt zip API RSS growth (${N} submissions)`, Math.max(...rounds.decrypt.map((x) => x.growthMb)), { goal: '< 64', unit: 'MB', digits: 1 });
  writeProfileWindows();
} finally {
  await collect?.stop();
  await redis.stop();
  await postgres.stop();
}
