import { constants, createHash, generateKeyPairSync, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import { DecryptionFailureError } from '../src/encryption/decryption-failure.js';
import { decryptEnvelope, EnvelopeDecryptor, unwrapAhead } from '../src/encryption/envelope-decryptor.js';
import { parseManifest, type EnvelopeManifest } from '../src/encryption/manifest.js';
import { partIv } from '../src/encryption/part-cipher.js';
import { base64Spki, loadPrivateKey, loadPublicKey } from '../src/encryption/rsa-keys.js';
import { unwrapOaepOffThread } from '../src/encryption/rsa-oaep.js';
import { encryptSubmission, ivSeed, type ManifestStyle, type PlainSubmission, type Wrapping } from './odk-encryptor.js';

const pair = generateKeyPairSync('rsa', { modulusLength: 2048 });
const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pem = (k: KeyObject, type: 'pkcs1' | 'pkcs8') => k.export({ format: 'pem', type }) as string;
const priv = (text: string) => {
  const k = loadPrivateKey(text);
  if (!k.ok) throw new Error(k.failure.message);
  return k.value;
};
const manifestOf = (xml: string): EnvelopeManifest => {
  const m = parseManifest(xml);
  if (!m.ok) throw new Error(m.failure.message);
  return m.value;
};
const xmlOf = (id: string, version: string | null, instanceId: string, extra = '') =>
  `<?xml version='1.0' ?><data id="${id}"${version !== null ? ` version="${version}"` : ''}><name>Ama Łódź 名前</name>${extra}<meta><instanceID>${instanceId}</instanceID></meta></data>`;

function submission(over: Partial<PlainSubmission> = {}): PlainSubmission {
  const instanceId = over.instanceId ?? `uuid:${randomBytes(16).toString('hex')}`;
  return { publicKey: base64Spki(pair.publicKey), formId: 'household', version: '2024-05', instanceId, submissionXml: xmlOf('household', '2024-05', instanceId), ...over };
}

describe('envelopes of the test encryptor, every variant', () => {
  const photo = randomBytes(100_000);
  const cases: Array<[ManifestStyle, Wrapping, 'pkcs1' | 'pkcs8', string | null, number]> = [];
  for (const style of ['collect', 'enketo'] as const)
    for (const wrapping of ['sha256-mgf1-sha256', 'sha256-mgf1-sha1', 'sha1'] as const)
      for (const format of ['pkcs1', 'pkcs8'] as const) cases.push([style, wrapping, format, format === 'pkcs1' ? '3' : null, wrapping === 'sha1' ? 0 : 2]);

  it.each(cases)('%s manifest, %s wrapping, %s key, version %s, %i media', (style, wrapping, format, version, mediaCount) => {
    const media = Array.from({ length: mediaCount }, (_, i) => ({ name: `photo-${i}.jpg`, bytes: i === 0 ? photo : randomBytes(17 * i) }));
    const instanceId = `uuid:${randomBytes(16).toString('hex')}`;
    const submissionXml = xmlOf('household', version, instanceId);
    const env = encryptSubmission(submission({ style, wrapping, version, media, instanceId, submissionXml }));
    const manifest = manifestOf(env.manifest);
    expect(manifest.version).toBe(version);
    const out = decryptEnvelope(manifest, priv(pem(pair.privateKey, format)), env.parts);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.value.status).toBe('decrypted');
    expect(out.value.submissionXml!.toString('utf8')).toBe(submissionXml);
    expect(out.value.media.map((m) => m.name)).toEqual(media.map((m) => m.name));
    out.value.media.forEach((m, i) => expect(m.bytes.equals(media[i]!.bytes)).toBe(true));
    const opened = EnvelopeDecryptor.open(manifest, priv(pem(pair.privateKey, format)));
    expect(opened.ok && opened.value.variant).toBe(wrapping === 'sha1' ? 'sha1-mgf1-sha1' : wrapping);
  });

  it('more than 16 parts: the seed byte index wraps around (part 16 bumps byte 0 again)', () => {
    const media = Array.from({ length: 20 }, (_, i) => ({ name: `f${i}.bin`, bytes: Buffer.from(`file ${i}`) }));
    const env = encryptSubmission(submission({ media }));
    const out = decryptEnvelope(manifestOf(env.manifest), pair.privateKey, env.parts);
    expect(out.ok && out.value.media.map((m) => m.bytes.toString())).toEqual(media.map((m) => m.bytes.toString()));
  });

  it('a seed byte of 0xFF wraps to 0x00 as Java\'s byte does', () => {
    const instanceId = 'uuid:wrap';
    let aesKey = randomBytes(32);
    while (ivSeed(instanceId, aesKey)[0] !== 0xff) aesKey = randomBytes(32);
    expect(partIv(instanceId, aesKey, 0)[0]).toBe(0);
    const env = encryptSubmission(submission({ instanceId, aesKey, media: [{ name: 'a.jpg', bytes: Buffer.from('photo') }] }));
    const out = decryptEnvelope(manifestOf(env.manifest), pair.privateKey, env.parts);
    expect(out.ok && out.value.status).toBe('decrypted');
  });

  it.each([
    ['byte 1 (mid-word: Enketo flips byte 0)', 1, 2, true],
    ['byte 7 (mid-word, seventh media part)', 7, 8, true],
    ['byte 4 (word start: Enketo wraps like Java)', 4, 5, false],
  ])('an Enketo envelope whose seed %s was 0xFF: decrypted with Enketo\'s own IVs', (_name, byte, parts, differs) => {
    const instanceId = `uuid:${randomBytes(8).toString('hex')}`;
    let aesKey = randomBytes(32);
    // Only that byte at 0xFF among those the parts increment (another one would decide the case instead).
    const only = (seed: Buffer) => seed[byte] === 0xff && Array.from({ length: parts }, (_, i) => i).every((i) => i === byte || seed[i % 16] !== 0xff);
    while (!only(ivSeed(instanceId, aesKey))) aesKey = randomBytes(32);
    const media = Array.from({ length: parts - 1 }, (_, i) => ({ name: `m${i}.jpg`, bytes: randomBytes(i === 0 ? 5 : 300) }));
    const env = encryptSubmission(submission({ instanceId, aesKey, style: 'enketo', media }));
    const manifest = manifestOf(env.manifest);
    const opened = EnvelopeDecryptor.open(manifest, pair.privateKey);
    expect(opened.ok && opened.value.parts.some((p) => opened.value.enketoIvDiffers(p))).toBe(differs);
    const out = decryptEnvelope(manifest, pair.privateKey, env.parts);
    expect(out.ok && out.value.status).toBe('decrypted');
    expect(out.ok && out.value.media.map((m) => m.bytes.equals(media.find((x) => x.name === m.name)!.bytes))).toEqual(media.map(() => true));
    // The same envelope as Collect makes it needs no second reading.
    const collect = encryptSubmission(submission({ instanceId, aesKey, style: 'collect', media }));
    const out2 = decryptEnvelope(manifestOf(collect.manifest), pair.privateKey, collect.parts);
    expect(out2.ok && out2.value.status).toBe('decrypted');
  });

  it('form ids, versions and instanceIDs with XML specials and non-ASCII text round-trip', () => {
    const instanceId = 'uuid:ñ&<x>';
    const env = encryptSubmission(submission({ formId: 'f&<"é', version: 'v "1" & ü', instanceId, submissionXml: 'plain' }));
    const m = manifestOf(env.manifest);
    expect([m.formId, m.version, m.instanceId]).toEqual(['f&<"é', 'v "1" & ü', instanceId]);
    expect(decryptEnvelope(m, pair.privateKey, env.parts).ok).toBe(true);
  });

  it('streams a part in chunks of any size, with the plaintext MD5 the signature needs', async () => {
    const big = randomBytes(1_000_003);
    const env = encryptSubmission(submission({ media: [{ name: 'video.mp4', bytes: big }] }));
    const opened = EnvelopeDecryptor.open(manifestOf(env.manifest), pair.privateKey);
    if (!opened.ok) throw new Error(opened.failure.message);
    const md5s = new Map<string, string>();
    for (const chunkSize of [1, 15, 16, 17, 65_536]) {
      const ct = env.parts.get('video.mp4.enc')!;
      const chunks = Array.from({ length: Math.ceil(ct.length / chunkSize) }, (_, i) => ct.subarray(i * chunkSize, (i + 1) * chunkSize));
      const decipher = opened.value.decipher('video.mp4.enc')!;
      const out: Buffer[] = [];
      decipher.on('data', (c: Buffer) => out.push(c));
      await pipeline(Readable.from(chunkSize === 1 ? chunks.slice(0, 50_000).concat([ct.subarray(50_000)]) : chunks), decipher);
      expect(Buffer.concat(out).equals(big)).toBe(true);
      expect(decipher.md5Hex).toBe(createHash('md5').update(big).digest('hex'));
      md5s.set('video.mp4.enc', decipher.md5Hex!);
    }
    const xml = opened.value.decryptPart('submission.xml.enc', env.parts.get('submission.xml.enc')!);
    md5s.set('submission.xml.enc', createHash('md5').update(xml.ok ? xml.value : Buffer.alloc(0)).digest('hex'));
    expect(opened.value.verify(md5s)).toEqual({ ok: true, value: true });
  });

  it('a streamed part that was cut short fails the stream with the typed reason', async () => {
    const env = encryptSubmission(submission({ media: [{ name: 'a.jpg', bytes: randomBytes(1000) }] }));
    const opened = EnvelopeDecryptor.open(manifestOf(env.manifest), pair.privateKey);
    if (!opened.ok) throw new Error('not opened');
    const decipher = opened.value.decipher('a.jpg.enc')!;
    decipher.resume();
    const err = await pipeline(Readable.from([env.parts.get('a.jpg.enc')!.subarray(0, 1000)]), decipher).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DecryptionFailureError);
    expect((err as DecryptionFailureError).failure).toMatchObject({ reason: 'part_undecryptable', file: 'a.jpg.enc' });
    expect(opened.value.decipher('nope.enc')).toBeNull();
  });
});

describe('failures are typed, never thrown', () => {
  const env = encryptSubmission(submission({ media: [{ name: 'a.jpg', bytes: randomBytes(5000) }, { name: 'b.jpg', bytes: randomBytes(10) }] }));
  const manifest = manifestOf(env.manifest);
  const run = (parts: Map<string, Buffer>, key: KeyObject = pair.privateKey, m = manifest) => {
    const out = decryptEnvelope(m, key, parts);
    return out.ok ? out.value.status : out.failure.reason;
  };

  it('wrong private key: key_unwrap_failed', () => expect(run(env.parts, other.privateKey)).toBe('key_unwrap_failed'));

  it('a media part missing: incomplete, the other parts still read, the missing one named', () => {
    const parts = new Map(env.parts);
    parts.delete('a.jpg.enc');
    const out = decryptEnvelope(manifest, pair.privateKey, parts);
    expect(out.ok && [out.value.status, out.value.missing, out.value.media.map((m) => m.name), out.value.submissionXml !== null]).toEqual(['incomplete', ['a.jpg.enc'], ['b.jpg'], true]);
  });

  it('two media parts swapped: they do not decrypt with each other\'s IV (signature or padding fails)', () => {
    const parts = new Map(env.parts);
    parts.set('a.jpg.enc', env.parts.get('b.jpg.enc')!);
    parts.set('b.jpg.enc', env.parts.get('a.jpg.enc')!);
    expect(['signature_mismatch', 'part_undecryptable']).toContain(run(parts));
  });

  it('every single-byte change of a media part is caught', () => {
    const ct = env.parts.get('b.jpg.enc')!;
    for (let i = 0; i < ct.length; i++) {
      const bad = Buffer.from(ct);
      bad[i] ^= 1;
      expect(['signature_mismatch', 'part_undecryptable']).toContain(run(new Map([...env.parts, ['b.jpg.enc', bad]])));
    }
  });

  it('a media part named in the manifest that was not signed (added after encryption): signature_mismatch', () => {
    const extra = env.manifest.replace('<encryptedXmlFile>', '<media><file>c.jpg.enc</file></media>\n<encryptedXmlFile>');
    // Adding a file moves the XML part's IV: its first block no longer decrypts to what was signed.
    expect(['signature_mismatch', 'part_undecryptable']).toContain(run(new Map([...env.parts, ['c.jpg.enc', Buffer.alloc(16)]]), pair.privateKey, manifestOf(extra)));
  });

  it('private keys: PKCS#1 and PKCS#8 read; public keys, protected PEM, EC keys, garbage and small keys refused', () => {
    expect(loadPrivateKey(pem(pair.privateKey, 'pkcs1')).ok).toBe(true);
    expect(loadPrivateKey(pem(pair.privateKey, 'pkcs8')).ok).toBe(true);
    const protectedPem = pair.privateKey.export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'a passphrase' }) as string;
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    const small = generateKeyPairSync('rsa', { modulusLength: 512 }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
    for (const bad of [protectedPem, ec, small, pair.publicKey.export({ format: 'pem', type: 'spki' }) as string, '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----', '', 'x'.repeat(20_000)]) {
      const r = loadPrivateKey(bad);
      expect(!r.ok && r.failure.reason).toBe('private_key_invalid');
    }
    expect(loadPrivateKey(protectedPem).ok || (loadPrivateKey(protectedPem) as { failure: { message: string } }).failure.message).toMatch(/passphrase-protected/);
  });

  it('public keys: base64 SPKI and PEM read; under 2048 bits, EC and garbage refused', () => {
    expect(loadPublicKey(base64Spki(pair.publicKey)).ok).toBe(true);
    expect(loadPublicKey(pair.publicKey.export({ format: 'pem', type: 'spki' }) as string).ok).toBe(true);
    const small = base64Spki(generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey);
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    for (const bad of [small, ec, 'not base64!', 'AAAA', '']) {
      const r = loadPublicKey(bad);
      expect(!r.ok && r.failure.reason).toBe('public_key_invalid');
    }
  });
});

describe('manifest parsing', () => {
  const env = encryptSubmission(submission({ media: [{ name: 'a.jpg', bytes: Buffer.from('x') }] }));
  const reasonOf = (xml: string) => {
    const m = parseManifest(xml);
    return m.ok ? 'ok' : `${m.failure.reason}: ${m.failure.message}`;
  };

  it.each([
    ['not XML', 'not xml', /manifest_invalid: .*Malformed XML/],
    ['a DOCTYPE', `<!DOCTYPE data [<!ENTITY x "y">]>${env.manifest.replace(/^<\?xml[^>]*>/, '')}`, /manifest_invalid: .*DOCTYPE/],
    ['another namespace', env.manifest.replace('http://www.opendatakit.org/xforms/encrypted', 'http://example.org/x'), /namespace/],
    ['not encrypted="yes"', env.manifest.replace('encrypted="yes"', 'encrypted="no"'), /encrypted="yes"/],
    ['no form id', env.manifest.replace(/ id="household"/, ''), /form id/],
    ['no key', env.manifest.replace(/<base64EncryptedKey>.*<\/base64EncryptedKey>/, ''), /no base64EncryptedKey/],
    ['a key that is not base64', env.manifest.replace(/<base64EncryptedKey>[^<]*/, '<base64EncryptedKey>@@@@'), /not base64/],
    ['no instanceID', env.manifest.replace(/<orx:meta.*<\/orx:meta>/, ''), /instanceID/],
    ['no XML part', env.manifest.replace(/<encryptedXmlFile>.*<\/encryptedXmlFile>/, ''), /no encryptedXmlFile/],
    ['a path as file name', env.manifest.replace('a.jpg.enc', '../../etc/passwd.enc'), /not a plain file name/],
    ['the same media twice', env.manifest.replace('<encryptedXmlFile>', '<media><file>a.jpg.enc</file></media><encryptedXmlFile>'), /twice/],
    ['the XML part also as media', env.manifest.replace('a.jpg.enc', 'submission.xml.enc'), /both as media/],
    ['two keys', env.manifest.replace('<encryptedXmlFile>', '<base64EncryptedKey>AAAA</base64EncryptedKey><encryptedXmlFile>'), /more than one/],
    ['a signature that is not base64', env.manifest.replace(/<base64EncryptedElementSignature>[^<]*/, '<base64EncryptedElementSignature>no'), /not base64/],
  ])('%s: manifest_invalid', (_name, xml, expected) => expect(reasonOf(xml)).toMatch(expected));

  it('reads an Aggregate-stored manifest: instanceID as a root attribute, a prefixed root, several files in one <media>', () => {
    const xml = `<n:data xmlns:n="http://opendatakit.org/submissions" id="f" encrypted="YES" instanceID="uuid:1"><n:base64EncryptedKey>AAAA</n:base64EncryptedKey><n:media><n:file>a.enc</n:file><n:file>b.enc</n:file></n:media><n:encryptedXmlFile>submission.xml.enc</n:encryptedXmlFile></n:data>`;
    const m = parseManifest(xml);
    expect(m.ok && [m.value.instanceId, m.value.mediaFiles, m.value.encryptedSignature]).toEqual(['uuid:1', ['a.enc', 'b.enc'], null]);
  });

  it('over the element cap: refused before the rest is read', () => {
    const m = parseManifest(`<data xmlns="http://opendatakit.org/submissions">${'<media><file>a</file></media>'.repeat(1000)}</data>`, { maxNodes: 100, maxDepth: 64 });
    expect(!m.ok && m.failure.message).toMatch(/INPUT_MAX_NODES/);
  });

  it('fuzz: any change to a manifest, and any bytes as parts, give an outcome, never an exception', () => {
    const parts = [...env.parts.entries()];
    fc.assert(
      fc.property(fc.nat(env.manifest.length), fc.nat(env.manifest.length), fc.string({ maxLength: 40 }), fc.uint8Array({ maxLength: 80 }), (at, len, insert, junk) => {
        const xml = env.manifest.slice(0, at) + insert + env.manifest.slice(Math.min(env.manifest.length, at + (len % 30)));
        const m = parseManifest(xml);
        expect(typeof m.ok).toBe('boolean');
        if (m.ok) {
          const out = decryptEnvelope(m.value, pair.privateKey, new Map(parts.map(([n, b], i) => [n, i === 0 ? Buffer.from(junk) : b])));
          expect(typeof out.ok).toBe('boolean');
        }
      }),
      { numRuns: 300, seed: 45 },
    );
  });
});

describe('the key and signature unwrapped ahead in a crypto thread (unwrapAhead)', () => {
  const media = [{ name: 'a.jpg', bytes: randomBytes(5000) }];

  it.each(['sha256-mgf1-sha256', 'sha256-mgf1-sha1', 'sha1'] as const)('%s wrapping: Collect\'s reading only, and the same outcome as without', async (wrapping) => {
    const env = encryptSubmission(submission({ wrapping, media }));
    const manifest = manifestOf(env.manifest);
    const ahead = await unwrapAhead(manifest, pair.privateKey);
    const collect = wrapping === 'sha256-mgf1-sha256';
    expect([ahead.aesKey?.length ?? null, ahead.signature?.length ?? null]).toEqual(collect ? [32, 16] : [null, null]);
    const withAhead = decryptEnvelope(manifest, pair.privateKey, env.parts, ahead);
    const without = decryptEnvelope(manifest, pair.privateKey, env.parts);
    expect(withAhead.ok && without.ok).toBe(true);
    if (!withAhead.ok || !without.ok) return;
    expect(withAhead.value.submissionXml!.equals(without.value.submissionXml!)).toBe(true);
    expect(withAhead.value.media[0]!.bytes.equals(media[0]!.bytes)).toBe(true);
  });

  it.each(['sha256-mgf1-sha256', 'sha1'] as const)('%s wrapping: the key alone ahead, the signature later (unwrapSignatureAhead), the same verdicts', async (wrapping) => {
    const s = submission({ wrapping, media });
    const env = encryptSubmission(s);
    const manifest = manifestOf(env.manifest);
    const ahead = await unwrapAhead(manifest, pair.privateKey, { signature: false });
    expect([ahead.aesKey?.length ?? null, ahead.signature]).toEqual([wrapping === 'sha1' ? null : 32, null]);
    const md5 = (b: Buffer | string) => createHash('md5').update(b).digest('hex');
    const md5s = new Map([['a.jpg.enc', md5(media[0]!.bytes)], ['submission.xml.enc', md5(s.submissionXml)]]);
    const verdict = async (m: EnvelopeManifest, sums: Map<string, string>) => {
      const opened = EnvelopeDecryptor.open(m, pair.privateKey, await unwrapAhead(m, pair.privateKey, { signature: false }));
      if (!opened.ok) return opened.failure.reason;
      await opened.value.unwrapSignatureAhead();
      const verified = opened.value.verify(sums);
      return verified.ok ? 'verified' : verified.failure.reason;
    };
    expect(await verdict(manifest, md5s)).toBe('verified');
    expect(await verdict(manifest, new Map([...md5s, ['a.jpg.enc', md5('another photo')]]))).toBe('signature_mismatch');
    const swapped = { ...manifest, encryptedSignature: manifestOf(encryptSubmission(submission({ wrapping, media })).manifest).encryptedSignature };
    expect(await verdict(swapped, md5s)).toBe('signature_mismatch');
  });

  it('many envelopes at once, spread over the key\'s copies: each gets its own key back, and the copies are still in use afterwards', async () => {
    const wrapped = Array.from({ length: 24 }, () => {
      const aesKey = randomBytes(32);
      return { aesKey, wrapped: publicEncrypt({ key: pair.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, aesKey) };
    });
    for (let round = 0; round < 2; round++) {
      const out = await Promise.all(wrapped.map((w) => unwrapOaepOffThread(pair.privateKey, w.wrapped, 32)));
      expect(out.every((b, i) => b?.equals(wrapped[i]!.aesKey))).toBe(true);
    }
    // The key of another pair opens none of them, however the copies are shared out.
    expect((await Promise.all(wrapped.map((w) => unwrapOaepOffThread(other.privateKey, w.wrapped, 32)))).every((b) => b === null)).toBe(true);
  });

  it.each(['sha256-mgf1-sha256', 'sha1'] as const)('%s wrapping: the XML part\'s file decrypted in the same message with Collect\'s reading only', async (wrapping) => {
    const s = submission({ wrapping, media });
    const env = encryptSubmission(s);
    const manifest = manifestOf(env.manifest);
    const dir = mkdtempSync(join(tmpdir(), 'unwrap-ahead-'));
    try {
      const file = join(dir, 'submission.xml.enc');
      writeFileSync(file, env.parts.get('submission.xml.enc')!);
      const ahead = await unwrapAhead(manifest, pair.privateKey, { signature: true, xml: { file, maxBytes: Number.POSITIVE_INFINITY } });
      if (wrapping === 'sha1') return expect(ahead).toEqual({ aesKey: null, signature: null, xml: null });
      const xml = Buffer.from(s.submissionXml);
      expect(ahead.xml?.plaintext.equals(xml)).toBe(true);
      expect(ahead.xml?.md5Hex).toBe(createHash('md5').update(xml).digest('hex'));
      expect(ahead.signature?.length).toBe(16);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a wrong key opens nothing ahead: key_unwrap_failed; another envelope\'s signature: signature_mismatch', async () => {
    const env = encryptSubmission(submission({ media }));
    const manifest = manifestOf(env.manifest);
    const wrong = await unwrapAhead(manifest, other.privateKey);
    expect(wrong).toEqual({ aesKey: null, signature: null, xml: null });
    const out = decryptEnvelope(manifest, other.privateKey, env.parts, wrong);
    expect(out.ok ? out.value.status : out.failure.reason).toBe('key_unwrap_failed');
    const second = manifestOf(encryptSubmission(submission({ media })).manifest);
    const swapped = { ...manifest, encryptedSignature: second.encryptedSignature };
    const ahead = await unwrapAhead(swapped, pair.privateKey);
    expect(ahead.signature?.length).toBe(16);
    const mismatch = decryptEnvelope(swapped, pair.privateKey, env.parts, ahead);
    expect(mismatch.ok ? mismatch.value.status : mismatch.failure.reason).toBe('signature_mismatch');
  });
});
