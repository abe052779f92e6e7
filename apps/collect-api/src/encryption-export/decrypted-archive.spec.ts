import { createCipheriv, randomBytes } from 'node:crypto';
import { PassThrough, Readable } from 'node:stream';
import { collected } from '@collect/testing';
import { PartDecipher } from '../encryption/part-cipher.js';
import { partEntry, wholeEntry } from './decrypted-archive.js';

/** AES-256-CFB of the bytes with PKCS5 padding, as an ODK part is made. */
function encrypted(key: Buffer, iv: Buffer, plain: Buffer): Buffer {
  const pad = 16 - (plain.length % 16);
  const c = createCipheriv('aes-256-cfb', key, iv);
  return Buffer.concat([c.update(Buffer.concat([plain, Buffer.alloc(pad, pad)])), c.final()]);
}

describe('partEntry', () => {
  it('decrypts the part into the entry, then lets go of the decipher and the streams while yazl still holds the function', async () => {
    const [key, iv, photo] = [randomBytes(32), randomBytes(16), randomBytes(100_000)];
    const reading = new Set<Readable>();
    // Only weak references stay in this scope, as yazl keeps only the function.
    const { streamFunction, decipherRef, entryRef } = (() => {
      const decipher = new PartDecipher(key, iv, 'photo.jpg.enc');
      const entry = new PassThrough();
      decipher.pipe(entry);
      const opened = () => Promise.resolve(Readable.from([encrypted(key, iv, photo)], { objectMode: false }));
      return { streamFunction: partEntry({ opened, decipher, entry }, reading), decipherRef: new WeakRef(decipher), entryRef: new WeakRef(entry) };
    })();
    const out = await (async () => {
      const stream = await new Promise<Readable>((resolve, reject) => streamFunction((err, s) => (err ? reject(err) : resolve(s))));
      return Buffer.concat((await stream.toArray()) as Buffer[]);
    })();
    expect(out.equals(photo)).toBe(true);
    expect(reading.size).toBe(0);
    expect(await collected(decipherRef)).toBe(true);
    expect(await collected(entryRef)).toBe(true);
    // yazl calls it once; a second call is an error, not a second stream.
    await expect(new Promise((resolve, reject) => streamFunction((err, s) => (err ? reject(err) : resolve(s))))).rejects.toThrow('read twice');
  });
});

describe('wholeEntry', () => {
  type StreamFunction = (cb: (err: Error | null, stream: Readable) => void) => void;
  const read = async (f: StreamFunction) => {
    const stream = await new Promise<Readable>((resolve, reject) => f((err, s) => (err ? reject(err) : resolve(s))));
    return Buffer.concat((await stream.toArray()) as Buffer[]).toString('hex');
  };

  it("hands over the thread's plaintext and its MD5, then lets go of the plaintext while yazl still holds the function", async () => {
    const seen: string[] = [];
    const { streamFunction, plaintextRef, hex } = (() => {
      const plaintext = randomBytes(100_000);
      const notStreamed = () => {
        throw new Error('streamed');
      };
      return { streamFunction: wholeEntry(Promise.resolve({ plaintext, md5Hex: 'md5' }), (h) => seen.push(h), notStreamed), plaintextRef: new WeakRef(plaintext), hex: plaintext.toString('hex') };
    })();
    expect(await read(streamFunction)).toBe(hex);
    expect(seen).toEqual(['md5']);
    expect(await collected(plaintextRef)).toBe(true);
    await expect(read(streamFunction)).rejects.toThrow('read twice');
  });

  it('streams the part where the thread gave nothing back', async () => {
    const streamed: StreamFunction = (cb) => cb(null, Readable.from([Buffer.from('streamed')], { objectMode: false }));
    const seen: string[] = [];
    expect(await read(wholeEntry(Promise.resolve(null), (h) => seen.push(h), () => streamed))).toBe(Buffer.from('streamed').toString('hex'));
    expect(seen).toEqual([]);
  });
});
