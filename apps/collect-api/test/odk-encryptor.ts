/**
 * An ODK submission encryptor for the tests, written from ODK Collect's `EncryptionUtils`
 * (Java, Bouncy Castle) and Enketo's `encryptor.js` (node-forge) with node:crypto alone; it
 * shares no code with the product's decryptor. It reproduces Collect's ciphertext of a real
 * Collect-made submission byte for byte (test/encryption-fixtures.spec.ts), so what it makes is
 * what phones make.
 *
 * What it follows:
 * - a random 256-bit AES key, wrapped with RSA-OAEP; Collect's Bouncy Castle reading is SHA-256
 *   with MGF1-SHA-256; Java's own provider gives SHA-256 with MGF1-SHA-1; plain SHA-1 OAEP too;
 * - the IV seed: MD5(instanceID UTF-8 bytes, AES key); before each file is ciphered, Java does
 *   `++ivSeedArray[ivCounter % 16]; ++ivCounter` on a signed byte array;
 * - each file: `AES/CFB/PKCS5Padding` (CFB with 128-bit feedback, PKCS#5 padding); media files
 *   first in the order listed, `submission.xml` last;
 * - the signature: MD5 of formId, version (when the form has one), the base64 key, the
 *   instanceID, `name::md5hex` per media file then `submission.xml::md5hex`, each followed by
 *   "\n", wrapped like the key;
 * - the manifest: Collect's (namespace http://www.opendatakit.org/xforms/encrypted, `orx:meta`)
 *   or Enketo's (http://opendatakit.org/submissions, `<meta xmlns="http://openrosa.org/xforms">`),
 *   each media file in a `<media>` of its own.
 */
import { constants, createCipheriv, createHash, createPublicKey, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';

export type Wrapping = 'sha256-mgf1-sha256' | 'sha256-mgf1-sha1' | 'sha1';
export type ManifestStyle = 'collect' | 'enketo';

export interface PlainSubmission {
  /** base64 SPKI as in base64RsaPublicKey, or a public KeyObject. */
  publicKey: string | KeyObject;
  formId: string;
  /** Omitted from the manifest and the signature when null or undefined. */
  version?: string | null;
  instanceId: string;
  submissionXml: string | Buffer;
  /** Plaintext media in the order the phone lists them; names without `.enc`. */
  media?: Array<{ name: string; bytes: Buffer }>;
  style?: ManifestStyle;
  wrapping?: Wrapping;
  /** A fixed AES key (tests that need a given IV seed); random otherwise. */
  aesKey?: Buffer;
  /** Leave the signature element out. */
  unsigned?: boolean;
}

export interface Envelope {
  manifest: string;
  /** Ciphertext by part name (`<media>.enc`, `submission.xml.enc`). */
  parts: Map<string, Buffer>;
  aesKey: Buffer;
  base64EncryptedKey: string;
  /** The exact text whose MD5 was signed. */
  signedText: string;
}

const COLLECT_NS = 'http://www.opendatakit.org/xforms/encrypted';
const ENKETO_NS = 'http://opendatakit.org/submissions';
const OPENROSA_NS = 'http://openrosa.org/xforms';

function publicKeyOf(k: string | KeyObject): KeyObject {
  if (typeof k !== 'string') return k;
  return createPublicKey({ key: Buffer.from(k, 'base64'), format: 'der', type: 'spki' });
}

/** RFC 8017 7.1.1 EME-OAEP encoding with separate hashes for OAEP and MGF1 (empty label). */
function oaepEncode(message: Buffer, k: number, hash: string, mgfHash: string): Buffer {
  const hLen = createHash(hash).digest().length;
  const mgf = (seed: Buffer, len: number) => {
    const chunks: Buffer[] = [];
    for (let c = 0; chunks.length * createHash(mgfHash).digest().length < len; c++) {
      const counter = Buffer.from([c >>> 24, (c >>> 16) & 255, (c >>> 8) & 255, c & 255]);
      chunks.push(createHash(mgfHash).update(Buffer.concat([seed, counter])).digest());
    }
    return Buffer.concat(chunks).subarray(0, len);
  };
  const ps = Buffer.alloc(k - message.length - 2 * hLen - 2);
  const db = Buffer.concat([createHash(hash).digest(), ps, Buffer.from([1]), message]);
  const seed = randomBytes(hLen);
  const dbMask = mgf(seed, db.length);
  const maskedDb = Buffer.from(db.map((b, i) => b ^ dbMask[i]!));
  const seedMask = mgf(maskedDb, hLen);
  const maskedSeed = Buffer.from(seed.map((b, i) => b ^ seedMask[i]!));
  return Buffer.concat([Buffer.from([0]), maskedSeed, maskedDb]);
}

export function wrap(publicKey: KeyObject, data: Buffer, wrapping: Wrapping): Buffer {
  if (wrapping === 'sha256-mgf1-sha1') {
    const k = (publicKey.asymmetricKeyDetails!.modulusLength! + 7) >> 3;
    return publicEncrypt({ key: publicKey, padding: constants.RSA_NO_PADDING }, oaepEncode(data, k, 'sha256', 'sha1'));
  }
  return publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: wrapping === 'sha1' ? 'sha1' : 'sha256' }, data);
}

/**
 * Collect's EncryptedFormInformation: the key, the signed byte IV seed and its counter. With
 * `enketo`, the seed as Enketo's `Seed` keeps it: an array of JavaScript numbers (255 + 1 is
 * 256), turned into an IV string by `String.fromCharCode` that node-forge reads four characters
 * at a time into 32-bit words (`c0 << 24 ^ c1 << 16 ^ c2 << 8 ^ c3`).
 */
class FormEncryption {
  private readonly ivSeedArray: Int8Array;
  private readonly enketoSeed: number[];
  private ivCounter = 0;
  constructor(instanceId: string, readonly key: Buffer, private readonly enketo: boolean) {
    const digest = createHash('md5').update(Buffer.from(instanceId, 'utf8')).update(key).digest();
    this.ivSeedArray = new Int8Array(digest.buffer.slice(digest.byteOffset, digest.byteOffset + 16));
    this.enketoSeed = [...digest];
  }
  private nextIv(): Buffer {
    if (!this.enketo) {
      ++this.ivSeedArray[this.ivCounter % this.ivSeedArray.length]!;
      ++this.ivCounter;
      return Buffer.from(this.ivSeedArray.buffer.slice(0));
    }
    ++this.enketoSeed[this.ivCounter % this.enketoSeed.length]!;
    ++this.ivCounter;
    const ivString = this.enketoSeed.map((code) => String.fromCharCode(code)).join('');
    const words = [0, 4, 8, 12].map((i) => (ivString.charCodeAt(i) << 24) ^ (ivString.charCodeAt(i + 1) << 16) ^ (ivString.charCodeAt(i + 2) << 8) ^ ivString.charCodeAt(i + 3));
    const iv = Buffer.alloc(16);
    words.forEach((w, i) => iv.writeInt32BE(w, i * 4));
    return iv;
  }
  /** getCipher(): bump one byte of the seed, then cipher with the whole seed as IV. */
  encrypt(plain: Buffer): Buffer {
    const iv = this.nextIv();
    const padLength = 16 - (plain.length % 16);
    const padded = Buffer.concat([plain, Buffer.alloc(padLength, padLength)]);
    const cipher = createCipheriv('aes-256-cfb', this.key, iv);
    return Buffer.concat([cipher.update(padded), cipher.final()]);
  }
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function encryptSubmission(s: PlainSubmission): Envelope {
  const publicKey = publicKeyOf(s.publicKey);
  const wrapping = s.wrapping ?? 'sha256-mgf1-sha256';
  const aesKey = s.aesKey ?? randomBytes(32);
  const base64EncryptedKey = wrap(publicKey, aesKey, wrapping).toString('base64');
  const enc = new FormEncryption(s.instanceId, aesKey, s.style === 'enketo');
  const lines = [s.formId, ...(s.version != null ? [s.version] : []), base64EncryptedKey, s.instanceId];
  const parts = new Map<string, Buffer>();
  for (const m of s.media ?? []) {
    lines.push(`${m.name}::${createHash('md5').update(m.bytes).digest('hex')}`);
    parts.set(`${m.name}.enc`, enc.encrypt(m.bytes));
  }
  const xml = Buffer.isBuffer(s.submissionXml) ? s.submissionXml : Buffer.from(s.submissionXml, 'utf8');
  lines.push(`submission.xml::${createHash('md5').update(xml).digest('hex')}`);
  parts.set('submission.xml.enc', enc.encrypt(xml));
  const signedText = lines.map((l) => l + '\n').join('');
  const signature = wrap(publicKey, createHash('md5').update(signedText, 'utf8').digest(), wrapping).toString('base64');

  const version = s.version != null ? ` version="${esc(s.version)}"` : '';
  const media = (s.media ?? []).map((m) => `<media><file${s.style === 'enketo' ? ' type="file"' : ''}>${esc(m.name)}.enc</file></media>`);
  const sig = s.unsigned ? '' : `<base64EncryptedElementSignature>${signature}</base64EncryptedElementSignature>`;
  const manifest =
    (s.style ?? 'collect') === 'collect'
      ? `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><data xmlns="${COLLECT_NS}" id="${esc(s.formId)}"${version} encrypted="yes"><base64EncryptedKey>${base64EncryptedKey}</base64EncryptedKey><orx:meta xmlns:orx="${OPENROSA_NS}"><orx:instanceID>${esc(s.instanceId)}</orx:instanceID></orx:meta>\n${media.map((m) => m + '\n').join('')}<encryptedXmlFile>submission.xml.enc</encryptedXmlFile>${sig}</data>`
      : `<data xmlns="${ENKETO_NS}" encrypted="yes" id="${esc(s.formId)}"${version}><base64EncryptedKey>${base64EncryptedKey}</base64EncryptedKey><meta xmlns="${OPENROSA_NS}"><instanceID>${esc(s.instanceId)}</instanceID></meta>${media.join('')}<encryptedXmlFile type="file">submission.xml.enc</encryptedXmlFile>${sig}</data>`;
  return { manifest, parts, aesKey, base64EncryptedKey, signedText };
}

/** The IV seed Collect starts from, for tests that pick an AES key to reach a given seed byte. */
export function ivSeed(instanceId: string, aesKey: Buffer): Buffer {
  return createHash('md5').update(Buffer.from(instanceId, 'utf8')).update(aesKey).digest();
}
