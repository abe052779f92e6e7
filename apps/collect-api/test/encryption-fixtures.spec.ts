import { constants, createHash, createPrivateKey, privateDecrypt, publicEncrypt, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { decryptEnvelope, EnvelopeDecryptor } from '../src/encryption/envelope-decryptor.js';
import { parseManifest, COLLECT_MANIFEST_NS, SUBMISSIONS_MANIFEST_NS, type EnvelopeManifest } from '../src/encryption/manifest.js';
import { loadPrivateKey } from '../src/encryption/rsa-keys.js';
import { encryptSubmission, ivSeed } from './odk-encryptor.js';

/**
 * Real envelopes made by ODK Collect (from ODK Central's and ODK Briefcase's public test data;
 * sources in each folder's README), read from ../shared beside the repository.
 */
const FIXTURES = fileURLToPath(new URL('../../../../shared/fixtures/', import.meta.url));
const read = (dir: string, file: string) => readFileSync(`${FIXTURES}${dir}/${file}`, 'utf8');

interface Fixture {
  manifest: EnvelopeManifest;
  pem: string;
  ciphertext: Buffer;
  /** The README says the file adds one trailing newline to the plaintext. */
  expected: Buffer;
}

function fixture(dir: string): Fixture {
  const parsed = parseManifest(read(dir, 'manifest.xml'));
  if (!parsed.ok) throw new Error(parsed.failure.message);
  return {
    manifest: parsed.value,
    pem: read(dir, 'priv.pem'),
    ciphertext: Buffer.from(read(dir, 'submission.xml.enc.b64').replace(/\s+/g, ''), 'base64'),
    expected: Buffer.from(read(dir, 'expected-submission.xml').replace(/\n$/, ''), 'utf8'),
  };
}

const key = (pem: string) => {
  const k = loadPrivateKey(pem);
  if (!k.ok) throw new Error(k.failure.message);
  return k.value;
};

describe('encrypted envelopes made by ODK Collect', () => {
  const central = fixture('central-encryption');
  const briefcase = fixture('briefcase-encryption');

  it('reads both manifests: Collect\'s namespace with a version and a media file, Aggregate\'s without', () => {
    expect(central.manifest).toMatchObject({ namespace: COLLECT_MANIFEST_NS, formId: 'encrypted', version: 'working3', instanceId: 'uuid:99b303d9-6494-477b-a30d-d8aae8867335', mediaFiles: ['1561432532482.jpg.enc'], xmlFile: 'submission.xml.enc' });
    expect(briefcase.manifest).toMatchObject({ namespace: SUBMISSIONS_MANIFEST_NS, formId: 'encrypted-form', version: null, instanceId: 'uuid:494cd080-3bf4-47be-b40f-c706a950d58a', mediaFiles: [], xmlFile: 'submission.xml.enc' });
    expect(central.manifest.encryptedKey).toHaveLength(256);
    expect(briefcase.manifest.encryptedSignature).toHaveLength(256);
  });

  it('decrypts Collect 1.22\'s submission (PKCS#1 key, SHA-256/MGF1-SHA-256) with its photo not arrived: incomplete, the XML read', () => {
    const out = decryptEnvelope(central.manifest, key(central.pem), new Map([['submission.xml.enc', central.ciphertext]]));
    expect(out.ok && out.value).toEqual({ submissionXml: central.expected, media: [], missing: ['1561432532482.jpg.enc'], status: 'incomplete' });
    const opened = EnvelopeDecryptor.open(central.manifest, key(central.pem));
    expect(opened.ok && opened.value.variant).toBe('sha256-mgf1-sha256');
  });

  it('decrypts and verifies the signature of the Briefcase vector (every part present)', () => {
    const out = decryptEnvelope(briefcase.manifest, key(briefcase.pem), new Map([['submission.xml.enc', briefcase.ciphertext]]));
    expect(out.ok && out.value).toEqual({ submissionXml: briefcase.expected, media: [], missing: [], status: 'decrypted' });
  });

  it('reads the same keys as PKCS#8', () => {
    for (const f of [central, briefcase]) {
      const pkcs8 = createPrivateKey(f.pem).export({ format: 'pem', type: 'pkcs8' }) as string;
      expect(pkcs8).toContain('BEGIN PRIVATE KEY');
      const out = decryptEnvelope(f.manifest, key(pkcs8), new Map([['submission.xml.enc', f.ciphertext]]));
      expect(out.ok && out.value.submissionXml).toEqual(f.expected);
    }
  });

  it('the test encryptor makes Collect\'s exact ciphertext and signature from the same key and plaintext', () => {
    // The AES key, unwrapped here with OpenSSL directly (not the product's code).
    for (const [f, media] of [[central, [{ name: '1561432532482.jpg', bytes: Buffer.from('not the photo') }]], [briefcase, []]] as const) {
      const aesKey = privateDecrypt({ key: createPrivateKey(f.pem), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, f.manifest.encryptedKey);
      const env = encryptSubmission({
        publicKey: createPublicKey(createPrivateKey(f.pem)),
        formId: f.manifest.formId,
        version: f.manifest.version,
        instanceId: f.manifest.instanceId,
        submissionXml: f.expected,
        media: [...media],
        aesKey,
      });
      expect(env.parts.get('submission.xml.enc')!.equals(f.ciphertext)).toBe(true);
      if (f === briefcase) {
        // Collect's signature, opened with OpenSSL, is the MD5 of the encryptor's signed text once the key line is Collect's.
        const signed = env.signedText.replace(env.base64EncryptedKey, f.manifest.base64EncryptedKey);
        const digest = privateDecrypt({ key: createPrivateKey(f.pem), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, f.manifest.encryptedSignature!);
        expect(digest.equals(createHash('md5').update(signed).digest())).toBe(true);
        expect(signed.endsWith('\n')).toBe(true);
      }
    }
    expect(ivSeed('x', Buffer.alloc(32))).toHaveLength(16);
  });

  describe('altered Collect envelopes fail with a typed reason', () => {
    const parts = (ct: Buffer) => new Map([['submission.xml.enc', ct]]);
    const reason = (m: EnvelopeManifest, pem: string, ct: Buffer) => {
      const out = decryptEnvelope(m, key(pem), parts(ct));
      return out.ok ? out.value.status : out.failure.reason;
    };

    it('a byte changed in the middle of the XML part: signature_mismatch', () => {
      const ct = Buffer.from(briefcase.ciphertext);
      ct[40] ^= 0x20;
      expect(reason(briefcase.manifest, briefcase.pem, ct)).toBe('signature_mismatch');
    });

    it('a byte changed in the last block: the padding no longer checks (part_undecryptable)', () => {
      const ct = Buffer.from(briefcase.ciphertext);
      ct[ct.length - 1] ^= 0x5a;
      expect(reason(briefcase.manifest, briefcase.pem, ct)).toBe('part_undecryptable');
    });

    it('a truncated part: part_undecryptable naming it', () => {
      const out = decryptEnvelope(briefcase.manifest, key(briefcase.pem), parts(briefcase.ciphertext.subarray(0, 250)));
      expect(!out.ok && out.failure).toMatchObject({ reason: 'part_undecryptable', file: 'submission.xml.enc' });
    });

    it('the other vector\'s private key: key_unwrap_failed', () => {
      expect(reason(briefcase.manifest, central.pem, briefcase.ciphertext)).toBe('key_unwrap_failed');
    });

    it('another instanceID in the manifest: signature_mismatch', () => {
      expect(reason({ ...briefcase.manifest, instanceId: 'uuid:00000000-3bf4-47be-b40f-c706a950d58a' }, briefcase.pem, briefcase.ciphertext)).toBe('signature_mismatch');
    });

    it('a form version added to the manifest: signature_mismatch', () => {
      expect(reason({ ...briefcase.manifest, version: '2' }, briefcase.pem, briefcase.ciphertext)).toBe('signature_mismatch');
    });

    it('a signature wrapped for other content: signature_mismatch; one that is not a wrapping at all: signature_unwrap_failed; none: signature_missing', () => {
      const pub = createPublicKey(createPrivateKey(briefcase.pem));
      const forged = publicEncrypt({ key: pub, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, createHash('md5').update('something else\n').digest());
      expect(reason({ ...briefcase.manifest, encryptedSignature: forged }, briefcase.pem, briefcase.ciphertext)).toBe('signature_mismatch');
      expect(reason({ ...briefcase.manifest, encryptedSignature: Buffer.alloc(256, 7) }, briefcase.pem, briefcase.ciphertext)).toBe('signature_unwrap_failed');
      expect(reason({ ...briefcase.manifest, encryptedSignature: null }, briefcase.pem, briefcase.ciphertext)).toBe('signature_missing');
    });
  });
});
