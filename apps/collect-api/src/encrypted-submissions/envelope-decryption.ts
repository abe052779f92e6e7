import { Inject, Injectable, Logger } from '@nestjs/common';
import type { KeyObject } from 'node:crypto';
import { CollectConfig } from '../config/collect-config.js';
import { failed, type DecryptionFailure, type Outcome } from '../encryption/decryption-failure.js';
import { decryptEnvelope, unwrapAhead } from '../encryption/envelope-decryptor.js';
import { kekFromConfig, kekId, openWithKek } from '../encryption/key-sealing.js';
import { parseManifest, type EnvelopeManifest } from '../encryption/manifest.js';
import type { FormEntity } from '../forms/form.entity.js';
import { FormEncryptionRepository, type FormKeyRow } from '../form-encryption/form-encryption.repository.js';
import { inputLimitsOf, parseXml, type XmlNode } from '../openrosa/xml.js';
import { detectMimetype } from '../storage/content-type.js';
import { FILE_STORAGE, safeStorageSegment, type FileStorage } from '../storage/file-storage.js';
import { EnvelopeRepository, type DecryptedAttachment, type KeptPart, type NewEnvelope } from './envelope.repository.js';

/**
 * The submissions' own reading of an instance document into a record of answers by xpath
 * (recordFromXml): given by intake, so a decrypted instance is read exactly as a plaintext one.
 * Throws a 4xx error for an instance it cannot read.
 */
export type InstanceReader = (root: XmlNode, form: FormEntity) => AnswerRecord;

/** Answers by xpath, repeats as lists of records: the shape of a stored submission's answers. */
export type AnswerRecord = { [xpath: string]: string | AnswerRecord[] };

/** A decrypted instance in memory (EnvelopeDecryption.openInHand). */
export interface DecryptedInHand {
  /** Answers by xpath, the metadata keys taken out. */
  record: AnswerRecord;
  xml: string;
  /** Media by plaintext name, manifest order. */
  media: Array<{ name: string; bytes: Buffer; mimetype: string }>;
}

/** The key-encryption key and its public name (kekId). */
type Kek = { bytes: Buffer; id: string };

/** Metadata of an instance that intake keeps apart from the answers (the submission's own columns). */
const METADATA_KEYS = ['meta/instanceID', 'meta/deprecatedID', 'formhub/uuid'];

/** The MIME type of every stored part: ciphertext says nothing of what it holds. */
export const PART_MIMETYPE = 'application/octet-stream';

/** Private keys opened lately, per process (docs/encryption.md "Server mode"): never written anywhere. */
const KEYS_KEPT = 64;
/** Key rows (public: mode, sealed key) looked up lately, per process. */
const KEY_ROWS_KEPT = 2_000;

/**
 * Decryption on receipt of server-mode envelopes (docs/encryption.md "Server mode"): once every
 * part of an envelope is stored, its private key (sealed under ENCRYPTION_KEK) opens it, and the
 * submission becomes what a plaintext one would have been, marked `_decryption: "decrypted"`. A
 * part that does not decrypt or a signature that does not verify marks it `failed` with the
 * reason; a missing part, a missing or changed KEK, leave it `pending`. The private key lives in
 * this process's memory only.
 */
@Injectable()
export class EnvelopeDecryption {
  private readonly logger = new Logger(EnvelopeDecryption.name);
  private readonly openKeys = new Map<string, KeyObject>();
  private readonly keyRows = new Map<string, FormKeyRow | null>();
  private readonly owners = new Map<number, string>();
  /** ENCRYPTION_KEK decoded and named once (per value): a server-mode intake otherwise decoded it and ran an HMAC for its name each time. */
  private kekRead: { value: string | undefined; kek: Kek | null } | null = null;

  constructor(
    private readonly envelopes: EnvelopeRepository,
    private readonly keys: FormEncryptionRepository,
    @Inject(FILE_STORAGE) private readonly storage: FileStorage,
    private readonly config: CollectConfig,
  ) {}

  /**
   * An envelope whose every part came in this request, held in memory, decrypted from those
   * bytes before anything is stored (docs/encryption.md "Server mode"): the decrypted instance
   * (its answers without the metadata keys, its XML) and its media with their types. Null when
   * the key is not a server key the KEK opens, or anything does not decrypt, verify or read: the
   * caller then stores the envelope as received, and decryptIfReady records why.
   */
  async openInHand(input: {
    form: FormEntity; manifest: EnvelopeManifest; keyId: string; ciphertexts: Map<string, Buffer>; readInstance: InstanceReader;
  }): Promise<DecryptedInHand | null> {
    const keyRow = await this.serverKey(input.form.id, input.keyId);
    const kek = keyRow ? this.kek() : null;
    const key = keyRow && kek ? this.privateKey(keyRow, kek) : null;
    if (!key?.ok) return null;
    // The two RSA operations on the thread pool, the event loop free meanwhile (docs/encryption.md, "Server mode").
    const opened = decryptEnvelope(input.manifest, key.value, input.ciphertexts, await unwrapAhead(input.manifest, key.value));
    if (!opened.ok || opened.value.status !== 'decrypted' || !opened.value.submissionXml) return null;
    const xml = opened.value.submissionXml.toString('utf8');
    const record = this.readDecrypted(xml, input.form, input.manifest.formId, input.manifest.instanceId, input.readInstance);
    if (!record.ok) return null;
    const media = opened.value.media.map((m) => ({ name: m.name, bytes: m.bytes, mimetype: detectMimetype(m.bytes.subarray(0, 16), m.name) }));
    return { record: record.value, xml, media };
  }

  /**
   * The `.enc` parts of an envelope stored decrypted (openInHand), kept with their bytes: each
   * written at `encrypted/<submission id>_<part>` in the form's folder (a path of this submission
   * alone, in a folder made once), then the envelope row, `decrypted`, and their attachment rows,
   * hidden, in one statement. When the envelope had a row already (a repeated send) the files
   * are removed again.
   */
  async keepParts(form: FormEntity, row: NewEnvelope, parts: Array<{ name: string; bytes: Buffer[]; size: number }>): Promise<void> {
    const dir = `${safeStorageSegment(await this.ownerOf(form))}/attachments/${form.id}_${form.idString}/encrypted`;
    const kept: KeptPart[] = [];
    let recorded = false;
    try {
      // Written side by side: a file's creation mostly waits on the file system, not on this process.
      // Every write settles before any is undone (finally below).
      const written = await Promise.allSettled(parts.map(async (part) => {
        const path = `${dir}/${row.submissionId}_${safeStorageSegment(part.name)}`;
        // A file left at this path by an interrupted earlier send is replaced.
        if (!(await this.storage.putBytesIfAbsent?.(path, part.bytes, PART_MIMETYPE))) await this.storage.putBytes(path, part.bytes, PART_MIMETYPE);
        kept.push({ path, name: part.name, mimetype: PART_MIMETYPE, size: part.size });
      }));
      const failure = written.find((w) => w.status === 'rejected');
      if (failure) throw failure.reason;
      recorded = await this.envelopes.recordDecrypted(row, kept);
    } finally {
      if (!recorded) await Promise.all(kept.map((k) => this.storage.delete(k.path).catch(() => undefined)));
    }
  }

  /** Whether the key `keyId` of the form is a server key (one the platform decrypts with on receipt). */
  async isServerKey(formId: number, keyId: string): Promise<boolean> {
    return (await this.serverKey(formId, keyId)) !== null;
  }

  /** The key row when it is a server key, else null; kept per process either way (a key row never changes). */
  private async serverKey(formId: number, keyId: string): Promise<FormKeyRow | null> {
    const cacheKey = `${formId}\n${keyId}`;
    let row = this.keyRows.get(cacheKey);
    if (row === undefined) {
      row = await this.keys.find(formId, keyId);
      if (this.keyRows.size >= KEY_ROWS_KEPT) this.keyRows.delete(this.keyRows.keys().next().value!);
      this.keyRows.set(cacheKey, row);
    }
    return row && row.mode === 'server' && row.sealed ? row : null;
  }

  /** Decrypts the envelope of `submissionId` when its key is the server's and all its parts are stored; else does nothing. */
  async decryptIfReady(submissionId: number, form: FormEntity, readInstance: InstanceReader): Promise<void> {
    const envelope = await this.envelopes.find(submissionId);
    if (!envelope || envelope.decryption !== 'pending' || !envelope.keyId) return;
    const keyRow = await this.serverKey(envelope.formId, envelope.keyId);
    if (!keyRow) return;
    const stored = new Map((await this.envelopes.partsOf([submissionId])).map((p) => [p.name, p]));
    if (envelope.parts.some((name) => !stored.has(name))) return;

    const kek = this.kek();
    if (!kek) {
      this.logger.warn({ submissionId }, 'a server-mode encrypted submission stays pending: ENCRYPTION_KEK is not set');
      return;
    }
    const key = this.privateKey(keyRow, kek);
    if (!key.ok) {
      // Not the submission's fault: it waits for the right KEK.
      this.logger.error({ submissionId, reason: key.failure.reason }, 'a server-mode encrypted submission stays pending: its key does not open with ENCRYPTION_KEK');
      return;
    }
    const manifest = parseManifest(envelope.manifest);
    if (!manifest.ok) return this.envelopes.markFailed(submissionId, manifest.failure);

    const ciphertexts = new Map<string, Buffer>();
    for (const [name, part] of stored) ciphertexts.set(name, await this.bytesOf(part.path));
    const opened = decryptEnvelope(manifest.value, key.value, ciphertexts, await unwrapAhead(manifest.value, key.value));
    if (!opened.ok) return this.envelopes.markFailed(submissionId, opened.failure);
    if (opened.value.status !== 'decrypted' || !opened.value.submissionXml) return;

    const xml = opened.value.submissionXml.toString('utf8');
    const record = this.readDecrypted(xml, form, manifest.value.formId, manifest.value.instanceId, readInstance);
    if (!record.ok) return this.envelopes.markFailed(submissionId, record.failure);

    const media = await this.storeMedia(form, submissionId, opened.value.media, record.value);
    let kept = false;
    try {
      kept = await this.envelopes.markDecrypted(submissionId, { json: { ...record.value, _encrypted: true, _decryption: 'decrypted' }, xml, media });
    } finally {
      if (!kept) await Promise.all(media.map((m) => this.storage.delete(m.path).catch(() => undefined)));
    }
  }

  /** ENCRYPTION_KEK and its name, or null when it is not set; throws when it is not the base64 of 32 bytes. */
  private kek(): Kek | null {
    const value = this.config.ENCRYPTION_KEK;
    if (!this.kekRead || this.kekRead.value !== value) {
      const kek = kekFromConfig(value);
      this.kekRead = { value, kek: kek ? { bytes: kek, id: kekId(kek) } : null };
    }
    return this.kekRead.kek;
  }

  /** The form version's private key, opened with the KEK once per process. */
  private privateKey(row: FormKeyRow, kek: Kek): Outcome<KeyObject> {
    const cacheKey = `${row.form_id}\n${row.key_id}\n${kek.id}`;
    const hit = this.openKeys.get(cacheKey);
    if (hit) return { ok: true, value: hit };
    const opened = openWithKek(row.sealed!, kek.bytes);
    if (opened.ok) {
      if (this.openKeys.size >= KEYS_KEPT) this.openKeys.delete(this.openKeys.keys().next().value!);
      this.openKeys.set(cacheKey, opened.value);
    }
    return opened;
  }

  /** The decrypted instance as a record (metadata keys taken out, as intake stores any instance). */
  private readDecrypted(xml: string, form: FormEntity, formId: string, instanceId: string, readInstance: InstanceReader): Outcome<AnswerRecord> {
    const invalid = (detail: string) => failed<AnswerRecord>('instance_invalid', `The decrypted submission is not an instance of this form: ${detail}`, 'submission.xml');
    let root: XmlNode;
    try {
      root = parseXml(xml, inputLimitsOf(this.config));
    } catch (err) {
      return invalid(err instanceof Error ? err.message : 'not XML');
    }
    if ((root.attrs.id ?? '') !== formId) return invalid(`its form id is "${(root.attrs.id ?? '').slice(0, 100)}", the manifest's "${formId}".`);
    let record: AnswerRecord;
    try {
      record = readInstance(root, form);
    } catch (err) {
      return invalid(err instanceof Error ? err.message : 'unreadable');
    }
    const own = String(record['meta/instanceID'] ?? '').replace(/^uuid:/i, '').trim();
    if (own && own !== instanceId.replace(/^uuid:/i, '').trim()) return invalid(`its instanceID is not the manifest's.`);
    for (const key of METADATA_KEYS) delete record[key];
    return { ok: true, value: record };
  }

  /** Writes the decrypted media where no other submission's files go; their attachment rows come with the commit. */
  private async storeMedia(form: FormEntity, submissionId: number, media: Array<{ name: string; bytes: Buffer }>, record: AnswerRecord): Promise<DecryptedAttachment[]> {
    if (!media.length) return [];
    const owner = await this.ownerOf(form);
    const dir = `${safeStorageSegment(owner)}/attachments/${form.id}_${form.idString}/decrypted/${submissionId}`;
    const answers = answersByValue(record);
    const out: DecryptedAttachment[] = [];
    try {
      for (const m of media) {
        const path = `${dir}/${safeStorageSegment(m.name)}`;
        const mimetype = detectMimetype(m.bytes.subarray(0, 16), m.name);
        await this.storage.putBytes(path, [m.bytes], mimetype);
        out.push({ path, name: m.name, mimetype, size: m.bytes.length, fieldXpath: answers.get(m.name) ?? null });
      }
      return out;
    } catch (err) {
      await Promise.all(out.map((a) => this.storage.delete(a.path).catch(() => undefined)));
      throw err;
    }
  }

  /** The form owner's username (the storage folder), kept per form: a renamed owner only moves where later files go. */
  private async ownerOf(form: FormEntity): Promise<string> {
    let owner = this.owners.get(form.id);
    if (owner === undefined) {
      owner = (await this.envelopes.ownerName(form.id)) ?? String(form.ownerId);
      if (this.owners.size >= KEY_ROWS_KEPT) this.owners.clear();
      this.owners.set(form.id, owner);
    }
    return owner;
  }

  private async bytesOf(path: string): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.storage.read(path)) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }
}

/** Each string answer and the first xpath that gives it (repeats included): which question names a file. */
function answersByValue(record: AnswerRecord, out = new Map<string, string>()): Map<string, string> {
  for (const [k, v] of Object.entries(record)) {
    if (Array.isArray(v)) for (const item of v) answersByValue(item, out);
    else if (typeof v === 'string' && !out.has(v)) out.set(v, k);
  }
  return out;
}

export type { DecryptionFailure };
