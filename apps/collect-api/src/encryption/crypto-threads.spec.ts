import { spawnSync } from 'node:child_process';
import { constants, createCipheriv, createHash, generateKeyPairSync, publicEncrypt, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decryptFileInThread, exact, stopCryptoThreads, unwrapInThread } from './crypto-threads.js';
import { partIv } from './part-cipher.js';

const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const wrap = (plain: Buffer, oaepHash = 'sha256') => publicEncrypt({ key: pair.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash }, plain);
/** One value unwrapped in a thread: its plaintext, or null. */
const one = async (key: Parameters<typeof unwrapInThread>[0], wrapped: Buffer) => (await unwrapInThread(key, [wrapped]))?.plaintexts[0] ?? null;

/** AES-256-CFB of the bytes with PKCS5 padding, as an ODK part is made. */
function encrypted(key: Buffer, iv: Buffer, plain: Buffer): Buffer {
  const pad = 16 - (plain.length % 16);
  const c = createCipheriv('aes-256-cfb', key, iv);
  return Buffer.concat([c.update(Buffer.concat([plain, Buffer.alloc(pad, pad)])), c.final()]);
}

describe('crypto threads', () => {
  const dir = mkdtempSync(join(tmpdir(), 'crypto-threads-'));
  afterAll(() => {
    stopCryptoThreads();
    rmSync(dir, { recursive: true, force: true });
  });

  it("open Collect's reading; another key or reading gives null", async () => {
    const keys = Array.from({ length: 12 }, () => randomBytes(32));
    const out = await Promise.all(keys.map((k) => one(pair.privateKey, wrap(k))));
    expect(out.every((b, i) => b?.equals(keys[i]!))).toBe(true);
    expect(await one(other.privateKey, wrap(keys[0]!))).toBeNull();
    expect(await one(pair.privateKey, wrap(keys[0]!, 'sha1'))).toBeNull();
  });

  it('read and decrypt a small part whole with its MD5; null for a tampered, missing or larger file', async () => {
    const [aesKey, iv, photo] = [randomBytes(32), randomBytes(16), randomBytes(100_000)];
    const file = join(dir, 'photo.jpg.enc');
    const ciphertext = encrypted(aesKey, iv, photo);
    writeFileSync(file, ciphertext);
    const part = { file, maxBytes: 1 << 20, aesKey, iv, name: 'photo.jpg.enc' };
    const out = await decryptFileInThread(part);
    expect(out?.plaintext.equals(photo)).toBe(true);
    expect(out?.md5Hex).toBe(createHash('md5').update(photo).digest('hex'));
    expect(await decryptFileInThread({ ...part, maxBytes: ciphertext.length - 1 })).toBeNull();
    expect(await decryptFileInThread({ ...part, file: join(dir, 'missing.enc') })).toBeNull();
    // The last block altered: the padding no longer reads.
    ciphertext[ciphertext.length - 1] ^= 0xff;
    writeFileSync(file, ciphertext);
    expect(await decryptFileInThread(part)).toBeNull();
  });

  it('unwrap a key and a signature in one message, and decrypt a part with that key and its IV', async () => {
    const [aesKey, digest, xml] = [randomBytes(32), randomBytes(16), randomBytes(700)];
    const file = join(dir, 'submission.xml.enc');
    writeFileSync(file, encrypted(aesKey, partIv('uuid:a', aesKey, 1), xml));
    const part = { file, maxBytes: Number.POSITIVE_INFINITY, instanceId: 'uuid:a', index: 1, name: 'submission.xml.enc' };
    const out = await unwrapInThread(pair.privateKey, [wrap(aesKey), wrap(digest)], part);
    expect(out?.plaintexts.map((p) => p?.toString('hex'))).toEqual([aesKey.toString('hex'), digest.toString('hex')]);
    expect(out?.part?.plaintext.equals(xml)).toBe(true);
    expect(out?.part?.md5Hex).toBe(createHash('md5').update(xml).digest('hex'));
    // Another place's IV garbles the first block, and with it the padding of a one-block part: nothing back.
    expect((await unwrapInThread(pair.privateKey, [wrap(aesKey)], { ...part, index: 0 }))?.part?.plaintext.equals(xml) ?? false).toBe(false);
    // A first value that is not an AES key (or not this key's) decrypts no part.
    expect(await unwrapInThread(other.privateKey, [wrap(aesKey), wrap(digest)], part)).toEqual({ plaintexts: [null, null], part: null });
    expect((await unwrapInThread(pair.privateKey, [wrap(digest)], part))?.part).toBeNull();
  });

  it("decrypt parts of several sizes one after another in one thread's kept buffer (one over 1 MB in a buffer of its own)", async () => {
    const aesKey = randomBytes(32);
    const sizes = [100_000, 3_000, 1_200_000, 250_000, 17, 100_000];
    const parts = sizes.map((n, i) => ({ plain: randomBytes(n), iv: randomBytes(16), file: join(dir, `part-${i}.enc`) }));
    for (const p of parts) writeFileSync(p.file, encrypted(aesKey, p.iv, p.plain));
    stopCryptoThreads();
    for (const p of parts) {
      const out = await decryptFileInThread({ file: p.file, maxBytes: 1 << 22, aesKey, iv: p.iv, name: 'p.enc' });
      expect(out?.plaintext.equals(p.plain)).toBe(true);
    }
  });

  it("send a small Buffer's bytes alone, not the pool it is a view into", () => {
    const wrapped = Buffer.from(randomBytes(256).toString('base64'), 'base64');
    // A message copies what structuredClone copies: the view's whole ArrayBuffer.
    expect(structuredClone(wrapped).buffer.byteLength).toBeGreaterThan(256);
    const sent = structuredClone(exact(wrapped));
    expect([sent.buffer.byteLength, Buffer.from(sent).equals(wrapped)]).toEqual([256, true]);
    const own = new Uint8Array(32);
    expect(exact(own)).toBe(own);
  });

  it('answer null to a request a message cannot carry, and go on', async () => {
    const key = randomBytes(32);
    const unsendable = { asymmetricKeyType: 'rsa', notCloneable: () => undefined } as unknown as Parameters<typeof unwrapInThread>[0];
    expect(await one(unsendable, wrap(key))).toBeNull();
    expect((await one(pair.privateKey, wrap(key)))?.equals(key)).toBe(true);
  });

  it('threads that end answer null to what they held, and the next request starts one again', async () => {
    const key = randomBytes(32);
    const held = Array.from({ length: 8 }, () => one(pair.privateKey, wrap(key)));
    stopCryptoThreads();
    const answers = await Promise.all(held);
    // Some may have been answered before the threads stopped; none is left waiting, none is wrong.
    expect(answers.every((a) => a === null || a.equals(key))).toBe(true);
    expect(answers.some((a) => a === null)).toBe(true);
    expect((await one(pair.privateKey, wrap(key)))?.equals(key)).toBe(true);
  });

  it('start in a process run with V8 options, which a worker thread may not be given', () => {
    // The built module, as the service runs it (pnpm test builds first).
    const built = fileURLToPath(new URL('../../dist/encryption/crypto-threads.js', import.meta.url));
    const script = `const { generateKeyPairSync, publicEncrypt, constants } = await import('node:crypto');
      const { unwrapInThread, stopCryptoThreads } = await import(${JSON.stringify(built)});
      const p = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const key = Buffer.alloc(32, 7);
      const out = (await unwrapInThread(p.privateKey, [publicEncrypt({ key: p.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, key)]))?.plaintexts[0];
      stopCryptoThreads();
      console.log(out?.equals(key) ? 'opened' : 'not opened');`;
    const run = spawnSync(process.execPath, ['--expose-gc', '--max-semi-space-size=8', '--max-old-space-size=384', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('opened');
  });
});
