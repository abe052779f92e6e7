import { constants, generateKeyPairSync, publicEncrypt, randomBytes } from 'node:crypto';
import { unwrapInThread, stopRsaThreads } from './rsa-threads.js';

const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const wrap = (plain: Buffer, oaepHash = 'sha256') => publicEncrypt({ key: pair.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash }, plain);

describe('RSA threads', () => {
  afterAll(() => stopRsaThreads());

  it("opens Collect's reading in a thread; another key or reading gives null", async () => {
    const keys = Array.from({ length: 12 }, () => randomBytes(32));
    const out = await Promise.all(keys.map((k) => unwrapInThread(pair.privateKey, wrap(k))));
    expect(out.every((b, i) => b?.equals(keys[i]!))).toBe(true);
    expect(await unwrapInThread(other.privateKey, wrap(keys[0]!))).toBeNull();
    expect(await unwrapInThread(pair.privateKey, wrap(keys[0]!, 'sha1'))).toBeNull();
  });

  it('threads that end answer null to what they held, and the next operation starts one again', async () => {
    const key = randomBytes(32);
    const held = Array.from({ length: 8 }, () => unwrapInThread(pair.privateKey, wrap(key)));
    stopRsaThreads();
    const answers = await Promise.all(held);
    // Some may have been answered before the threads stopped; none is left waiting, none is wrong.
    expect(answers.every((a) => a === null || a.equals(key))).toBe(true);
    expect(answers.some((a) => a === null)).toBe(true);
    expect((await unwrapInThread(pair.privateKey, wrap(key)))?.equals(key)).toBe(true);
  });
});
