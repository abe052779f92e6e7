// OpenRosa intake of encrypted submissions (docs/encryption.md, "Server mode"), each with one
// 100 KB JPEG, against the same plaintext submission, all in one run:
// - server mode (decrypted on receipt, before the answer) ÷ plaintext; goal >= 0.7;
// - self and passphrase modes (stored whole, nothing decrypted) ÷ plaintext; goal >= 0.9 each.
// Each request is a new instance, so each envelope is made afresh (a new IV per instance, the
// parts ciphered, a new signature), before the window that sends it: a pool of bodies, one per
// request the window is expected to send, so the load generator does not spend CPU on the
// envelopes on the API's cores while it is measured; a window that runs out makes the rest as
// it goes, and says how many. The AES key and its wrapping are made once per mode, which the
// platform cannot tell (docs/benchmarks.md, "encrypted-intake").
// BENCH_CPU_PROF=<dir> profiles the API; windows per case: plain, server, passphrase, self.
import { execFileSync } from 'node:child_process';
import { constants, createCipheriv, createHash, createPublicKey, generateKeyPairSync, publicEncrypt, randomBytes, randomUUID } from 'node:crypto';
import { startPostgres, startRedis } from '../libs/testing/dist/index.js';
import { createRequire } from 'node:module';
import { createForm, must, postmasterPidOf, report, requestsPerSecond, startCollect, userToken, writeProfileWindows } from './bench-helpers.mjs';
import { pairedRatio, roundsWithCpu } from './cpu-rounds.mjs';
import { openRosaPhotoBodies, photoJpeg, PHOTO_FORM_FIELDS } from './intake-fixtures.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

/** RSA-OAEP, SHA-256 with MGF1-SHA-256, as ODK Collect wraps. */
const wrap = (key, data) => publicEncrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, data);

/** AES-256-CFB over PKCS#5-padded bytes with the IV of part `index` (the seed's byte i % 16 incremented for parts 0..i). */
function cipherPart(aesKey, seed, index, plain) {
  const iv = Buffer.from(seed);
  for (let i = 0; i <= index; i++) iv[i % 16] = (iv[i % 16] + 1) & 0xff;
  const pad = 16 - (plain.length % 16);
  const c = createCipheriv('aes-256-cfb', aesKey, iv);
  return Buffer.concat([c.update(plain), c.update(Buffer.alloc(pad, pad)), c.final()]);
}

/** A maker of envelope bodies for one encrypted form: a new instance each call. */
function envelopeBodies({ idString, version, publicKey }, jpeg) {
  const key = createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
  const aesKey = randomBytes(32);
  const base64Key = wrap(key, aesKey).toString('base64');
  const jpegMd5 = createHash('md5').update(jpeg).digest('hex');
  return () => {
    const uuid = randomUUID();
    const instanceId = `uuid:${uuid}`;
    const photo = `${Date.now()}-${uuid.slice(0, 8)}.jpg`;
    const xml = Buffer.from(`<?xml version="1.0"?><data id="${idString}" version="${version}"><name>Jane</name><age>34</age><photo>${photo}</photo><meta><instanceID>${instanceId}</instanceID></meta></data>`);
    const seed = createHash('md5').update(instanceId, 'utf8').update(aesKey).digest();
    const photoPart = cipherPart(aesKey, seed, 0, jpeg);
    const xmlPart = cipherPart(aesKey, seed, 1, xml);
    const signed = [idString, version, base64Key, instanceId, `${photo}::${jpegMd5}`, `submission.xml::${createHash('md5').update(xml).digest('hex')}`].map((l) => `${l}\n`).join('');
    const signature = wrap(key, createHash('md5').update(signed, 'utf8').digest()).toString('base64');
    const manifest = `<data xmlns="http://www.opendatakit.org/xforms/encrypted" id="${idString}" version="${version}" encrypted="yes"><base64EncryptedKey>${base64Key}</base64EncryptedKey><orx:meta xmlns:orx="http://openrosa.org/xforms"><orx:instanceID>${instanceId}</orx:instanceID></orx:meta><media><file>${photo}.enc</file></media><encryptedXmlFile>submission.xml.enc</encryptedXmlFile><base64EncryptedElementSignature>${signature}</base64EncryptedElementSignature></data>`;
    const boundary = `bench${uuid.replaceAll('-', '')}`;
    const part = (name, type, bytes) => [Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name === 'xml_submission_file' ? 'submission.xml' : name}"\r\nContent-Type: ${type}\r\n\r\n`), bytes, Buffer.from('\r\n')];
    const body = Buffer.concat([
      ...part('xml_submission_file', 'text/xml', Buffer.from(manifest)),
      ...part(`${photo}.enc`, 'application/octet-stream', photoPart),
      ...part('submission.xml.enc', 'application/octet-stream', xmlPart),
      Buffer.from(`--${boundary}--\r\n`),
    ]);
    return { body, contentType: `multipart/form-data; boundary=${boundary}` };
  };
}

const pg = await startPostgres({ fast: true });
const redis = await startRedis();
let collect;
try {
  collect = await startCollect({ pg, redis, database: 'bench_collect_encrypted', env: { ENCRYPTION_KEK: randomBytes(32).toString('base64') } });
  const base = collect.url;
  const apiPid = collect.api.child.pid;
  const postmaster = await postmasterPidOf(createRequire(new URL('../apps/collect-api/package.json', import.meta.url))('pg'), pg.adminUrl);
  const token = await userToken(base);
  const jpeg = await photoJpeg(100 * 1024);
  const forms = {};
  for (const [mode, body] of [['server', { mode: 'server' }], ['passphrase', { mode: 'passphrase', passphrase: 'a bench passphrase nobody keeps' }], ['self', null]]) {
    const idString = `bench_${mode}`;
    const form = await createForm(base, token, { id_string: idString, title: idString, fields: PHOTO_FORM_FIELDS });
    // Self mode: a public key whose private half this bench never holds.
    const request = body ?? { mode: 'self', public_key: generateKeyPairSync('rsa', { modulusLength: 3072 }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64') };
    await must(fetch(`${base}/api/v1/forms/${form.formid}/encryption`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify(request) }), 201);
    const xform = await (await must(fetch(`${base}/api/v1/forms/${form.formid}/form.xml`, { headers: { authorization: token } }), 200)).text();
    const root = new RegExp(`<[^<>]*\\sid="${idString}"[^<>]*>`).exec(xform)[0];
    forms[mode] = { idString, version: /\sversion="([^"]*)"/.exec(root)[1], publicKey: /base64RsaPublicKey="([^"]*)"/.exec(xform)[1], formid: form.formid };
  }
  await createForm(base, token, { id_string: 'bench_plain', title: 'Bench plain', fields: PHOTO_FORM_FIELDS });
  const plainBodies = openRosaPhotoBodies('bench_plain', jpeg);
  const makers = Object.fromEntries(Object.entries(forms).map(([mode, f]) => [mode, envelopeBodies(f, jpeg)]));
  // One of each first: the server-mode one must come back decrypted.
  for (const [mode, make] of Object.entries(makers)) {
    const one = make();
    await must(fetch(`${base}/submission`, { method: 'POST', headers: { authorization: token, 'content-type': one.contentType }, body: one.body }), 201);
    const [row] = await (await must(fetch(`${base}/api/v1/data/${forms[mode].formid}`, { headers: { authorization: token } }), 200)).json();
    const expected = mode === 'server' ? 'decrypted' : 'pending';
    if (row?._decryption !== expected) throw new Error(`${mode} mode: the first envelope is ${row?._decryption}, not ${expected}`);
  }

  /**
   * Envelope bodies made before a window: `fill(n)` makes n of them (each a new instance) and
   * starts the window's count of `madeInWindow`; `next` hands out one each (the autocannon
   * request copies it), making one when the pool is empty.
   */
  const pooled = (make) => {
    let pool = [];
    const p = { madeInWindow: 0, fill(n) { pool = Array.from({ length: n }, make); p.madeInWindow = 0; }, next() { const b = pool.pop(); if (b) return b; p.madeInWindow++; return make(); } };
    return p;
  };
  const pools = Object.fromEntries(Object.entries(makers).map(([mode, make]) => [mode, pooled(make)]));
  const openRosa = (label, next) => ({
    label: `POST /submission, ${label}`, url: `${base}/submission`, method: 'POST', expect: 201,
    headers: { authorization: token },
    setupRequest: (req) => {
      const b = next();
      return { ...req, body: b.body, headers: { ...req.headers, 'content-type': b.contentType } };
    },
  });
  const cases = {
    plain: openRosa('plaintext, one 100 KB JPEG', () => ({ body: plainBodies.next(), contentType: plainBodies.contentType })),
    server: openRosa('server mode (decrypted on receipt)', pools.server.next),
    passphrase: openRosa('passphrase mode (stored)', pools.passphrase.next),
    self: openRosa('self mode (stored)', pools.self.next),
  };
  // The pool of a window: the most requests a window of the case has sent so far, twice over (a warm-up runs slower), plus one per connection.
  const most = Object.fromEntries(Object.keys(pools).map((k) => [k, 0]));
  const fillFor = (key, seconds) => pools[key]?.fill(Math.ceil(most[key] * seconds * 2) + CONNECTIONS);
  for (const [key, c] of Object.entries(cases)) { // warm-up
    fillFor(key, 1);
    const rps = await requestsPerSecond(c, 1, CONNECTIONS);
    if (key in most) most[key] = Math.max(most[key], rps);
  }
  const { results, rate } = await roundsWithCpu(cases, {
    rounds: ROUNDS, duration: DURATION, connections: CONNECTIONS, apiPid, postmaster, rotate: true,
    // Every window starts with no dirty pages: it pays for the writeback of its own files only,
    // never for a window before it (docs/benchmarks.md, "encrypted-intake").
    before: (key) => {
      fillFor(key, DURATION);
      execFileSync('sync');
    },
    after: (key, rps, r) => {
      if (key in most) most[key] = Math.max(most[key], rps);
      if (pools[key]?.madeInWindow) console.log(`${key}, round ${r + 1}: ${pools[key].madeInWindow} envelopes made inside the window (the pool ran out)`);
      pools[key]?.fill(0);
    },
  });
  // Each ratio is the median of the rounds' own ratios (pairedRatio), the rounds in turning order.
  report('ratio server-mode/plaintext', pairedRatio(results, rate, 'server', 'plain'), { goal: '>= 0.7' });
  report('ratio passphrase-mode/plaintext', pairedRatio(results, rate, 'passphrase', 'plain'), { goal: '>= 0.9' });
  report('ratio self-mode/plaintext', pairedRatio(results, rate, 'self', 'plain'), { goal: '>= 0.9' });
  const stored = (await (await must(fetch(`${base}/api/v1/forms/${forms.server.formid}`, { headers: { authorization: token } }), 200)).json()).num_of_submissions;
  console.log(`server-mode submissions stored: ${stored}`);
  writeProfileWindows();
} catch (err) {
  // A window with unexpected answers: the API's own error lines say why (the last of its kept output).
  const errors = (collect?.api.output() ?? '').split('\n').filter((line) => /"level":(50|60)/.test(line));
  console.log(`API error lines in its kept output: ${errors.length}`);
  for (const line of errors.slice(-10)) console.log(line.slice(0, 2000));
  throw err;
} finally {
  await collect?.stop();
  await redis.stop();
  await pg.stop();
}
