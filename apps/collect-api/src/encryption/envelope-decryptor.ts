import { createHash, timingSafeEqual, type KeyObject } from 'node:crypto';
import { failed, ok, type DecryptionFailure, type Outcome } from './decryption-failure.js';
import { plaintextName, type EnvelopeManifest } from './manifest.js';
import { AES_KEY_BYTES, decryptPart, enketoPartIv, partIv, PartDecipher } from './part-cipher.js';
import { decryptFileInThread, type DecryptedFile } from './crypto-threads.js';
import { unwrapManyOffThread, unwrapOaep, unwrapOaepOffThread, type OaepVariant } from './rsa-oaep.js';

const MD5_BYTES = 16;

/**
 * The envelope's key and signature unwrapped ahead (unwrapAhead) with Collect's reading; null
 * where that reading did not open it (EnvelopeDecryptor then tries every reading itself).
 */
export interface UnwrappedAhead {
  aesKey: Buffer | null;
  signature: Buffer | null;
}

/**
 * The envelope's AES key and element signature unwrapped in one message to a crypto thread
 * (unwrapManyOffThread), for decryptEnvelope: the event loop goes on meanwhile. What they give
 * is what EnvelopeDecryptor's first reading would have given; a null leaves that one to it.
 * Without `signature`, the key only (the signature is then unwrapped later, when it is needed:
 * EnvelopeDecryptor.unwrapSignatureAhead). With `xml`, the XML part's local file is also read
 * and decrypted there with the key and Collect's IV: `xml` is then its plaintext and MD5, or
 * null where the thread gave nothing back.
 */
export async function unwrapAhead(manifest: EnvelopeManifest, privateKey: KeyObject, o: { signature: boolean; xml?: { file: string; maxBytes: number } | null } = { signature: true }): Promise<UnwrappedAhead & { xml: DecryptedFile | null }> {
  const items = [{ wrapped: manifest.encryptedKey, expectedLength: AES_KEY_BYTES }];
  const signature = o.signature ? manifest.encryptedSignature : null;
  if (signature) items.push({ wrapped: signature, expectedLength: MD5_BYTES });
  // The XML part's place among the parts, as EnvelopeDecryptor counts it for its IV.
  const part = o.xml ? { ...o.xml, instanceId: manifest.instanceId, index: cipheringOrder(manifest).indexOf(manifest.xmlFile), name: manifest.xmlFile } : null;
  const unwrapped = await unwrapManyOffThread(privateKey, items, part);
  return { aesKey: unwrapped.plaintexts[0] ?? null, signature: signature ? (unwrapped.plaintexts[1] ?? null) : null, xml: unwrapped.part };
}

export type IvReading = 'collect' | 'enketo';

/** Every part in ciphering order: media in manifest order, the XML last (a part's IV counts its place here). */
function cipheringOrder(manifest: EnvelopeManifest): string[] {
  return [...manifest.mediaFiles, manifest.xmlFile];
}

/**
 * The text the element signature covers: form id, version (only when the manifest has one),
 * the base64 key as written, the instanceID, then `<name without .enc>::<md5 hex>` for each
 * media part in manifest order and last for the XML part; every line ends with "\n", the last
 * one too (docs/encryption.md "Signature").
 */
export function signatureText(manifest: EnvelopeManifest, md5HexByPart: ReadonlyMap<string, string>): string {
  const lines = [manifest.formId];
  if (manifest.version !== null) lines.push(manifest.version);
  lines.push(manifest.base64EncryptedKey, manifest.instanceId);
  for (const part of [...manifest.mediaFiles, manifest.xmlFile]) lines.push(`${plaintextName(part)}::${md5HexByPart.get(part) ?? ''}`);
  return lines.map((l) => `${l}\n`).join('');
}

/**
 * One envelope opened with one private key. `open` unwraps the AES key (or fails typed); then
 * parts decrypt by name, whole (`decryptPart`) or streamed (`decipher`), in any order, since
 * each part's IV depends only on its place in the manifest. `verify` checks the element
 * signature against the plaintext MD5 of every part. The AES key stays inside this object.
 */
export class EnvelopeDecryptor {
  private constructor(
    readonly manifest: EnvelopeManifest,
    private readonly privateKey: KeyObject,
    private readonly aesKey: Buffer,
    /** Which OAEP reading opened the key; the signature is tried with it first. */
    readonly variant: OaepVariant,
    /** The signature as Collect's reading unwrapped it ahead (used only when that reading opened the key too). */
    private signatureAhead: Buffer | null = null,
  ) {}

  /** `ahead`: the key and signature unwrapped already with Collect's reading (unwrapAhead), where it opened them. */
  static open(manifest: EnvelopeManifest, privateKey: KeyObject, ahead?: UnwrappedAhead): Outcome<EnvelopeDecryptor> {
    // Collect's reading is the first one unwrapOaep tries: what it opened ahead is what that would answer.
    const unwrapped = ahead?.aesKey ? { plaintext: ahead.aesKey, variant: 'sha256-mgf1-sha256' as const } : unwrapOaep(privateKey, manifest.encryptedKey, AES_KEY_BYTES);
    if (!unwrapped) return failed('key_unwrap_failed', 'The submission\'s key does not unwrap with this private key: the submission was encrypted for another key, or its manifest was altered.');
    const signatureAhead = unwrapped.variant === 'sha256-mgf1-sha256' ? (ahead?.signature ?? null) : null;
    return ok(new EnvelopeDecryptor(manifest, privateKey, unwrapped.plaintext, unwrapped.variant, signatureAhead));
  }

  /**
   * Unwraps the element signature in a crypto thread for `verify`, when the key opened with
   * Collect's reading (the reading verify tries first) and it was not unwrapped ahead already:
   * the decrypt export starts it as an envelope's media begin to stream, so that the RSA
   * operation runs beside them (docs/encryption.md, "Decrypting without a server-held key").
   * Never rejects; where it opens nothing, verify tries every reading itself.
   */
  async unwrapSignatureAhead(): Promise<void> {
    const signature = this.manifest.encryptedSignature;
    if (this.signatureAhead || this.variant !== 'sha256-mgf1-sha256' || !signature) return;
    this.signatureAhead = await unwrapOaepOffThread(this.privateKey, signature, MD5_BYTES);
  }

  /** Every part in ciphering order: media in manifest order, the XML last. */
  get parts(): string[] {
    return cipheringOrder(this.manifest);
  }

  /** `reading`: the IV as Collect makes it, or as Enketo does (see enketoPartIv). */
  decryptPart(name: string, ciphertext: Buffer, reading: IvReading = 'collect'): Outcome<Buffer> {
    const iv = this.ivOf(name, reading);
    if (!iv) return failed('manifest_invalid', `The manifest names no part ${name}.`, name);
    return decryptPart(this.aesKey, iv, ciphertext, name);
  }

  /** A decrypting stream for the part; null when the manifest names no such part. */
  decipher(name: string, reading: IvReading = 'collect'): PartDecipher | null {
    const iv = this.ivOf(name, reading);
    return iv ? new PartDecipher(this.aesKey, iv, name) : null;
  }

  /**
   * The part read from the local file `file` and decrypted whole in a crypto thread, with its
   * plaintext MD5; null when it is larger than `maxBytes`, missing, or does not decrypt (the
   * caller streams it through `decipher` then, which finds and reports what is wrong).
   */
  async decryptFileInThread(name: string, file: string, maxBytes: number, reading: IvReading = 'collect'): Promise<DecryptedFile | null> {
    const iv = this.ivOf(name, reading);
    return iv ? decryptFileInThread({ file, maxBytes, aesKey: this.aesKey, iv, name }) : null;
  }

  /** Whether Enketo's IV for this part differs from Collect's (only then is the other reading worth a try). */
  enketoIvDiffers(name: string): boolean {
    const a = this.ivOf(name, 'collect');
    const b = this.ivOf(name, 'enketo');
    return !!a && !!b && !a.equals(b);
  }

  /** Checks the element signature; `md5HexByPart` must hold every part's plaintext MD5. */
  verify(md5HexByPart: ReadonlyMap<string, string>): Outcome<true> {
    const signature = this.manifest.encryptedSignature;
    if (!signature) return failed('signature_missing', 'The manifest carries no base64EncryptedElementSignature, so the parts cannot be checked.');
    const missing = this.parts.find((p) => !md5HexByPart.has(p));
    if (missing) return failed('part_missing', `The part ${missing} has not arrived, so the signature cannot be checked yet.`, missing);
    // Unwrapped ahead with this key's reading, the first one tried here, or else here.
    const unwrapped = this.signatureAhead ? { plaintext: this.signatureAhead } : unwrapOaep(this.privateKey, signature, MD5_BYTES, this.variant);
    if (!unwrapped) return failed('signature_unwrap_failed', 'The element signature does not unwrap with this private key.');
    const expected = createHash('md5').update(signatureText(this.manifest, md5HexByPart), 'utf8').digest();
    if (!timingSafeEqual(unwrapped.plaintext, expected)) return failed('signature_mismatch', 'The element signature does not match the parts, ids and key of this submission: something was altered after it was encrypted.');
    return ok(true);
  }

  private ivOf(name: string, reading: IvReading): Buffer | null {
    const index = this.parts.indexOf(name);
    if (index < 0) return null;
    return (reading === 'enketo' ? enketoPartIv : partIv)(this.manifest.instanceId, this.aesKey, index);
  }
}

/** What `decryptEnvelope` gives back: the plaintext parts it could read, and what it could not. */
export interface DecryptedEnvelope {
  /** The submission XML, or null when its part is missing. */
  submissionXml: Buffer | null;
  /** Media by plaintext name (without `.enc`), manifest order. */
  media: Array<{ name: string; bytes: Buffer }>;
  /** Parts the manifest names that were not given. */
  missing: string[];
  /** `decrypted`: every part read and the signature verified; `incomplete`: parts missing, the rest read. */
  status: 'decrypted' | 'incomplete';
}

/**
 * Decrypts an envelope whose parts are in memory (`parts` by the names the manifest uses).
 * A missing part is reported, not a failure: the others are still decrypted and the signature
 * waits for it. Any part that does not decrypt, or a signature that does not verify, is a failure.
 * `ahead`: the key and signature unwrapped already (unwrapAhead).
 */
export function decryptEnvelope(manifest: EnvelopeManifest, privateKey: KeyObject, parts: ReadonlyMap<string, Buffer>, ahead?: UnwrappedAhead): Outcome<DecryptedEnvelope> {
  const opened = EnvelopeDecryptor.open(manifest, privateKey, ahead);
  if (!opened.ok) return opened;
  const decryptor = opened.value;
  const md5s = new Map<string, string>();
  const plain = new Map<string, Buffer>();
  const missing: string[] = [];
  const read = (reading: IvReading, only?: (name: string) => boolean): DecryptionFailure | null => {
    for (const name of decryptor.parts) {
      if (only && !only(name)) continue;
      const ciphertext = parts.get(name);
      if (!ciphertext) {
        if (reading === 'collect') missing.push(name);
        continue;
      }
      const part = decryptor.decryptPart(name, ciphertext, reading);
      if (!part.ok) return part.failure;
      plain.set(name, part.value);
      md5s.set(name, createHash('md5').update(part.value).digest('hex'));
    }
    return null;
  };
  let failure = read('collect');
  if (!failure && !missing.length) {
    const verified = decryptor.verify(md5s);
    failure = verified.ok ? null : verified.failure;
  }
  // A wrong IV garbles only a part's first block: an Enketo envelope whose seed overflowed fails
  // the signature (or, for a one-block part, its padding). Its own IVs are tried for the parts where they differ.
  if (failure && (failure.reason === 'signature_mismatch' || failure.reason === 'part_undecryptable') && !missing.length && decryptor.parts.some((p) => decryptor.enketoIvDiffers(p))) {
    const again = read('enketo', (p) => decryptor.enketoIvDiffers(p) || !plain.has(p));
    const verified = again ? null : decryptor.verify(md5s);
    if (verified?.ok) failure = null;
  }
  if (failure) return { ok: false, failure };
  return ok({
    submissionXml: plain.get(manifest.xmlFile) ?? null,
    media: manifest.mediaFiles.filter((m) => plain.has(m)).map((m) => ({ name: plaintextName(m), bytes: plain.get(m)! })),
    missing,
    status: missing.length ? 'incomplete' : 'decrypted',
  });
}

export type { DecryptionFailure };
