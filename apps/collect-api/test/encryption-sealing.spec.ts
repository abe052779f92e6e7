import { randomBytes } from 'node:crypto';
import { ConfigError } from '@collect/platform';
import { SecretLedger } from '@collect/testing';
import { loadCollectConfig } from '../src/config/collect-config.js';
import { decryptEnvelope } from '../src/encryption/envelope-decryptor.js';
import { DEFAULT_ARGON2ID, generateFormKeyPair, GENERATED_KEY_BITS, kekFromConfig, kekId, openWithKek, openWithPassphrase, sealWithKek, sealWithPassphrase, type SealedPrivateKey } from '../src/encryption/key-sealing.js';
import { parseManifest } from '../src/encryption/manifest.js';
import { base64Spki, keyId } from '../src/encryption/rsa-keys.js';
import { encryptSubmission } from './odk-encryptor.js';

/** Light parameters for the many round trips; one test runs the defaults. */
const LIGHT = { memory_kib: 8_192, passes: 1, parallelism: 1 };

describe('sealed private keys', () => {
  let pair: Awaited<ReturnType<typeof generateFormKeyPair>>;
  const passphrase = 'correct horse battery staple, twice';
  beforeAll(async () => {
    pair = await generateFormKeyPair();
  });

  it(`makes ${GENERATED_KEY_BITS}-bit RSA pairs; sealed under a passphrase with the default argon2id parameters, it opens and decrypts what phones send`, async () => {
    expect(pair.privateKey.asymmetricKeyDetails?.modulusLength).toBe(GENERATED_KEY_BITS);
    const sealed = await sealWithPassphrase(pair.privateKey, passphrase);
    expect(sealed).toMatchObject({ format: 'collect-sealed-key-v1', sealed_by: 'passphrase', cipher: 'aes-256-gcm', key_id: keyId(pair.publicKey), kdf: { name: 'argon2id', ...DEFAULT_ARGON2ID } });
    expect(DEFAULT_ARGON2ID).toEqual({ memory_kib: 65_536, passes: 3, parallelism: 1 });
    const opened = await openWithPassphrase(sealed, passphrase);
    if (!opened.ok) throw new Error(opened.failure.message);
    const env = encryptSubmission({ publicKey: base64Spki(pair.publicKey), formId: 'f', instanceId: 'uuid:1', submissionXml: '<data id="f"/>', media: [{ name: 'a.jpg', bytes: randomBytes(1000) }] });
    const m = parseManifest(env.manifest);
    const out = m.ok ? decryptEnvelope(m.value, opened.value, env.parts) : m;
    expect(out.ok && out.value.status).toBe('decrypted');
  });

  it('a wrong passphrase: passphrase_wrong; the same passphrase typed in another Unicode form opens', async () => {
    const composed = 'Zürich café passphrase';
    const sealed = await sealWithPassphrase(pair.privateKey, composed, LIGHT);
    const wrong = await openWithPassphrase(sealed, 'Zurich cafe passphrase');
    expect(!wrong.ok && wrong.failure.reason).toBe('passphrase_wrong');
    const decomposed = composed.normalize('NFD');
    expect(decomposed).not.toBe(composed);
    expect((await openWithPassphrase(sealed, decomposed)).ok).toBe(true);
  });

  it('every stored field is bound to the ciphertext: changing any one fails as a wrong passphrase would', async () => {
    const sealed = (await sealWithPassphrase(pair.privateKey, passphrase, LIGHT)) as Extract<SealedPrivateKey, { sealed_by: 'passphrase' }>;
    const flip = (b64: string) => {
      const b = Buffer.from(b64, 'base64');
      b[0] ^= 1;
      return b.toString('base64');
    };
    const variants: SealedPrivateKey[] = [
      { ...sealed, key_id: keyId((await generateFormKeyPair()).publicKey) },
      { ...sealed, kdf: { ...sealed.kdf, passes: 2 } },
      { ...sealed, kdf: { ...sealed.kdf, memory_kib: 9_216 } },
      { ...sealed, kdf: { ...sealed.kdf, salt: flip(sealed.kdf.salt) } },
      { ...sealed, iv: flip(sealed.iv) },
      { ...sealed, tag: flip(sealed.tag) },
      { ...sealed, ciphertext: flip(sealed.ciphertext) },
    ];
    for (const v of variants) {
      const out = await openWithPassphrase(v, passphrase);
      expect(!out.ok && out.failure.reason).toBe('passphrase_wrong');
    }
  });

  it('stored KDF parameters out of bounds or another format: sealed_key_invalid, without deriving', async () => {
    const sealed = (await sealWithPassphrase(pair.privateKey, passphrase, LIGHT)) as Extract<SealedPrivateKey, { sealed_by: 'passphrase' }>;
    const bad: unknown[] = [
      { ...sealed, kdf: { ...sealed.kdf, memory_kib: 4_194_304 } },
      { ...sealed, kdf: { ...sealed.kdf, passes: 1_000 } },
      { ...sealed, kdf: { ...sealed.kdf, salt: 'AAAA' } },
      { ...sealed, kdf: { ...sealed.kdf, name: 'pbkdf2' } },
      { ...sealed, format: 'other' },
      { ...sealed, ciphertext: 5 },
      sealWithKek(pair.privateKey, randomBytes(32)),
    ];
    for (const v of bad) {
      const out = await openWithPassphrase(v as SealedPrivateKey, passphrase);
      expect(!out.ok && out.failure.reason).toBe('sealed_key_invalid');
    }
  });

  it('server mode: sealed under the KEK, opened by it; another KEK is kek_wrong, naming the KEK id that sealed it', async () => {
    const kek = randomBytes(32);
    const sealed = sealWithKek(pair.privateKey, kek);
    expect(sealed).toMatchObject({ sealed_by: 'kek', kek_id: kekId(kek), key_id: keyId(pair.publicKey) });
    const opened = openWithKek(sealed, kek);
    expect(opened.ok && keyId(opened.value)).toBe(keyId(pair.publicKey));
    const other = openWithKek(sealed, randomBytes(32));
    expect(!other.ok && other.failure).toMatchObject({ reason: 'kek_wrong', message: expect.stringContaining(kekId(kek)) });
    const forged = openWithKek({ ...sealed, kek_id: kekId(Buffer.alloc(32, 1)) }, Buffer.alloc(32, 1));
    expect(!forged.ok && forged.failure.reason).toBe('kek_wrong');
    const passphraseSealed = await sealWithPassphrase(pair.privateKey, passphrase, LIGHT);
    const wrongKind = openWithKek(passphraseSealed, kek);
    expect(!wrongKind.ok && wrongKind.failure.reason).toBe('sealed_key_invalid');
  });

  it('neither the passphrase, the private key, the KEK nor the derived key reaches the stored record, a failure message or the process output', async () => {
    const ledger = new SecretLedger();
    const kekB64 = ledger.keep('ENCRYPTION_KEK', randomBytes(32).toString('base64'));
    const secretPassphrase = ledger.keep('passphrase', 'Pa55phrase-that-must-stay-in-memory');
    ledger.keep('private key (PKCS#8 PEM body)', (pair.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string).split('\n')[1]!);
    ledger.keep('private key (PKCS#1 PEM body)', (pair.privateKey.export({ format: 'pem', type: 'pkcs1' }) as string).split('\n')[1]!);
    ledger.keep('private key (DER, base64)', pair.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64').slice(0, 64));
    const kek = kekFromConfig(kekB64)!;

    const output: string[] = [];
    const writes = [process.stdout, process.stderr].map((s) => {
      const original = s.write.bind(s);
      s.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        output.push(String(chunk));
        return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof s.write;
      return () => (s.write = original);
    });
    const records: string[] = [];
    try {
      const byPassphrase = await sealWithPassphrase(pair.privateKey, secretPassphrase, LIGHT);
      const byKek = sealWithKek(pair.privateKey, kek);
      records.push(JSON.stringify(byPassphrase), JSON.stringify(byKek));
      for (const out of [await openWithPassphrase(byPassphrase, `${secretPassphrase}x`), openWithKek(byKek, randomBytes(32)), await openWithPassphrase({ ...byPassphrase, tag: 'AAAA' }, secretPassphrase)]) {
        records.push(JSON.stringify(out));
      }
      const opened = await openWithPassphrase(byPassphrase, secretPassphrase);
      records.push(JSON.stringify(opened), String(opened.ok && opened.value));
    } finally {
      writes.forEach((restore) => restore());
    }
    expect(ledger.leaks(records, 'stored records and outcomes')).toEqual([]);
    expect(ledger.leaks(output.join('').split('\n'), 'process output')).toEqual([]);
  });
});

describe('ENCRYPTION_KEK configuration', () => {
  it('unset by default: server mode unavailable', () => {
    expect(loadCollectConfig({}).ENCRYPTION_KEK).toBeUndefined();
    expect(kekFromConfig(undefined)).toBeNull();
  });

  it('the base64 of 32 bytes is accepted', () => {
    const value = randomBytes(32).toString('base64');
    expect(kekFromConfig(loadCollectConfig({ ENCRYPTION_KEK: value }).ENCRYPTION_KEK)).toHaveLength(32);
  });

  it.each([['too short', randomBytes(16).toString('base64')], ['too long', randomBytes(48).toString('base64')], ['a passphrase', 'my-server-encryption-passphrase-123'], ['hex', randomBytes(32).toString('hex')]])('%s: refused at start, naming the variable, not echoing the value', (_name, value) => {
    let error: ConfigError | undefined;
    try {
      loadCollectConfig({ ENCRYPTION_KEK: value });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.message).toMatch(/ENCRYPTION_KEK/);
    expect(error!.message).not.toContain(value);
  });
});
