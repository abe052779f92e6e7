import { ConflictException, Injectable, Logger } from '@nestjs/common';
import { FieldValidationError } from '@collect/contracts';
import { isEncryptedRoot, manifestFromXml, type EnvelopeManifest } from '../encryption/manifest.js';
import type { FormEntity } from '../forms/form.entity.js';
import type { UploadedFile } from '../openrosa/multipart.js';
import type { XmlNode } from '../openrosa/xml.js';
import { EnvelopeDecryption, PART_MIMETYPE, type AnswerRecord, type DecryptedInHand, type InstanceReader } from './envelope-decryption.js';
import { FormVersionKeys } from './form-version-keys.js';
import { EnvelopeRepository, type NewEnvelope } from './envelope.repository.js';


/**
 * What intake stores for an instance (the submissions service's `content`): a record of answers
 * by xpath, the instance XML, its files and the form version it names.
 */
export interface IntakeContent {
  record: AnswerRecord;
  xml?: string;
  /** `xml` parsed, when the caller has it: intake's entity statement reads it instead of parsing again. */
  root?: XmlNode;
  files: UploadedFile[];
  version?: string;
  /** An envelope's row, for the submissions' one statement to record with the instance (`StoredInstance.envelopeRecorded`). */
  envelope?: IntakeEnvelope;
}

/**
 * An envelope's row as intake's one statement records it with its submission (docs/encryption.md,
 * "How an envelope is stored"): `pending` (stored as received) or `decrypted` (on receipt, with
 * `keep`: its `.enc` parts as received, kept with the submission, hidden).
 */
export interface IntakeEnvelope {
  row: Omit<NewEnvelope, 'submissionId' | 'formId'>;
  decryption: 'pending' | 'decrypted';
  keep?: Array<{ name: string; bytes: Buffer[]; size: number; mimetype: string }>;
}

/** What the submissions service answers for a stored instance (only these fields are read). */
export interface StoredInstance {
  outcome: 'created' | 'updated' | 'duplicate';
  submission: { id: number; formId: number };
  /** The content's `envelope` was recorded with the submission; else intake records it after. */
  envelopeRecorded?: boolean;
}

/**
 * The encryption members of an envelope's stored record. `_encrypted` is JSON's true, which no
 * plaintext answer is (answers are text): the submissions read answers as text only.
 */
const PENDING_RECORD = { _encrypted: true, _decryption: 'pending' } as unknown as AnswerRecord;
const DECRYPTED_RECORD = { _encrypted: true, _decryption: 'decrypted' } as unknown as AnswerRecord;

/**
 * OpenRosa intake of encrypted envelopes (docs/encryption.md "Intake"). Every OpenRosa instance
 * goes through `receive`: a plaintext one to a form version that carries no key is stored as
 * before; an envelope to a form version with a key is stored whole, its `.enc` parts as
 * attachments; anything else is a 400 saying which. The envelope's row goes with the submission
 * in the intake's one statement (IntakeContent.envelope), else right after the store (an instance
 * the transactional path stores: a split send, a repeated one); in server mode the envelope is
 * decrypted as soon as its last part is there.
 */
@Injectable()
export class EnvelopeIntake {
  private readonly logger = new Logger(EnvelopeIntake.name);

  constructor(
    private readonly envelopes: EnvelopeRepository,
    private readonly versionKeys: FormVersionKeys,
    private readonly decryption: EnvelopeDecryption,
  ) {}

  /**
   * `form`: the form the instance was authorized for; `root`/`xml`: the parsed instance and its
   * text; `plain`: the content of a plaintext instance; `readInstance`: the instance reader for a
   * decrypted instance (the submissions' own); `store`: stores a content (the submissions service).
   */
  async receive<R extends StoredInstance>(input: {
    form: FormEntity; root: XmlNode; xml: string; files: UploadedFile[];
    plain: (form: FormEntity) => IntakeContent; readInstance: InstanceReader; store: (content: (form: FormEntity) => IntakeContent) => Promise<R>;
  }): Promise<R> {
    const { form, root } = input;
    const encrypted = isEncryptedRoot(root);
    const named = root.attrs.version?.trim() || form.version;
    const key = await this.versionKeys.keyOf(form, named);
    if (!encrypted) {
      if (key.keyId !== null || (key.known === false && this.versionKeys.currentKeyOf(form) !== null)) {
        throw refusal(`Form "${form.idString}" is encrypted (version "${key.known ? named : form.version}" carries a public key): its submissions must be encrypted envelopes, and this one is plaintext. Download the form again and send the submission from it.`);
      }
      return input.store(input.plain);
    }
    const manifest = manifestFromXml(root);
    if (!manifest.ok) throw refusal(manifest.failure.message);
    const m = manifest.value;
    if (m.formId !== form.idString) throw refusal(`The encrypted submission names the form "${m.formId}", not "${form.idString}".`);
    if (!key.known) throw refusal(`The encrypted submission names version "${named}" of form "${form.idString}", which the form does not have.`);
    if (key.keyId === null) throw refusal(`Form "${form.idString}" version "${named}" is not encrypted (it carries no public key), but this submission is an encrypted envelope.`);
    const parts = [...m.mediaFiles, m.xmlFile];
    const stray = input.files.find((f) => !parts.includes(f.name));
    if (stray) throw refusal(`The encrypted submission's manifest names no part "${stray.name.slice(0, 100)}"; its parts are ${parts.map((p) => `"${p}"`).join(', ')}.`);
    for (const f of input.files) f.mimetype = PART_MIMETYPE;
    const envelope = { formId: form.id, version: m.version, instanceId: stripScheme(m.instanceId), keyId: key.keyId, manifest: input.xml, parts };
    const row = { version: envelope.version, instanceId: envelope.instanceId, keyId: envelope.keyId, manifest: envelope.manifest, parts: envelope.parts };
    const pending = (): IntakeContent => ({
      record: { 'meta/instanceID': m.instanceId, ...PENDING_RECORD }, xml: input.xml, files: input.files, version: m.version ?? undefined,
      envelope: { row, decryption: 'pending' },
    });
    // Server mode, every part in this request: decrypted first, stored once as what it says (docs/encryption.md "Server mode").
    const opened = await this.openInHand(form, m, key.keyId, parts, input.files, input.readInstance);
    if (opened) {
      const decrypted = (): IntakeContent => ({
        record: { ...opened.record, 'meta/instanceID': m.instanceId, ...DECRYPTED_RECORD },
        xml: opened.xml,
        files: opened.media.map(mediaFile),
        version: m.version ?? undefined,
        envelope: { row, decryption: 'decrypted', keep: input.files.map((f) => ({ name: f.name, bytes: f.bytes!, size: f.size, mimetype: PART_MIMETYPE })) },
      });
      let result: R | null = null;
      try {
        result = await input.store(decrypted);
      } catch (err) {
        // The instance is stored already as the envelope it was (a part sent before): it goes the general way.
        if (!(err instanceof ConflictException)) throw err;
      }
      if (result?.envelopeRecorded) return result;
      if (result) {
        try {
          await this.decryption.keepParts(form, { ...envelope, submissionId: result.submission.id }, input.files.map((f) => ({ name: f.name, bytes: f.bytes!, size: f.size })));
        } catch (err) {
          this.logger.error({ err: errorSummary(err), submissionId: result.submission.id }, 'could not keep the parts of an encrypted submission stored decrypted');
        }
        return result;
      }
    }
    const result = await input.store(pending);
    await this.stored(result, form, envelope, input.readInstance);
    return result;
  }

  /** The decrypted instance when the key is a server key and every part is in memory; else null (never throws). */
  private async openInHand(form: FormEntity, m: EnvelopeManifest, keyId: string, parts: string[], files: UploadedFile[], readInstance: InstanceReader): Promise<DecryptedInHand | null> {
    try {
      if (!(await this.decryption.isServerKey(form.id, keyId))) return null;
      const ciphertexts = partsInHand(files, parts);
      return ciphertexts ? await this.decryption.openInHand({ form, manifest: m, keyId, ciphertexts, readInstance }) : null;
    } catch (err) {
      this.logger.error({ err: errorSummary(err), form: form.id }, 'could not decrypt an encrypted submission on receipt; it is stored as received');
      return null;
    }
  }

  /** The envelope row of a stored submission; a failure never fails the intake (the submission is stored, a later send records it). */
  private async recordEnvelope(result: StoredInstance, row: Omit<NewEnvelope, 'submissionId'>): Promise<boolean> {
    try {
      await this.envelopes.record({ ...row, submissionId: result.submission.id });
      return true;
    } catch (err) {
      this.logger.error({ err: errorSummary(err), submissionId: result.submission.id }, 'could not record an encrypted submission\'s envelope');
      return false;
    }
  }

  /**
   * The envelope row of an envelope stored as received, unless the store recorded it (the first
   * send's; later sends keep it);
   * then, when the key is the server's and every part is stored, decryption (parts sent in
   * several requests, or one that did not decrypt: decryptIfReady records why). A failure here
   * never fails the intake: the submission is stored, its envelope stays `pending`, and the next
   * send of it tries again.
   */
  private async stored(result: StoredInstance, form: FormEntity, envelope: Omit<NewEnvelope, 'submissionId'>, readInstance: InstanceReader): Promise<void> {
    const submissionId = result.submission.id;
    if (!result.envelopeRecorded && !(await this.recordEnvelope(result, envelope))) return;
    try {
      if (envelope.keyId && (await this.decryption.isServerKey(form.id, envelope.keyId))) await this.decryption.decryptIfReady(submissionId, form, readInstance);
    } catch (err) {
      this.logger.error({ err: errorSummary(err), submissionId }, 'could not decrypt an encrypted submission; it stays pending');
    }
  }

  /**
   * JSON intake: a plaintext submission to a form whose current version carries a key is a 400
   * (an envelope cannot be sent as JSON). Synchronous: the form's own XForm answers it.
   */
  refusePlaintextJson(form: FormEntity): void {
    if (this.versionKeys.currentKeyOf(form) !== null) {
      throw refusal(`Form "${form.idString}" is encrypted: its submissions must be encrypted envelopes sent over OpenRosa, not JSON.`);
    }
  }
}

/** `uuid:abc` → `abc`, as the submission's `_uuid` stores it. */
export function stripScheme(instanceId: string): string {
  return instanceId.replace(/^uuid:/i, '').trim();
}

/** Every part's bytes when all of them came in this request and are held in memory; else null. */
function partsInHand(files: UploadedFile[], parts: string[]): Map<string, Buffer> | null {
  const out = new Map<string, Buffer>();
  for (const name of parts) {
    const file = files.find((f) => f.name === name);
    if (!file?.bytes) return null;
    out.set(name, Buffer.concat(file.bytes));
  }
  return out;
}

/** A decrypted media file as an upload held in memory (stored as a plaintext instance's attachment). */
function mediaFile(m: DecryptedInHand['media'][number]): UploadedFile {
  return { field: m.name, name: m.name, tmpPath: '', bytes: [m.bytes], size: m.bytes.length, mimetype: m.mimetype };
}

function refusal(message: string): FieldValidationError {
  return new FieldValidationError({ xml_submission_file: [message] });
}

/** The error's name and message only: never its properties, which could hold bytes of a key or a part. */
export function errorSummary(err: unknown): { name: string; message: string } {
  return err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) };
}
