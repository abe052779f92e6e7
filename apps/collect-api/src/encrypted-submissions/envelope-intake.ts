import { Injectable, Logger } from '@nestjs/common';
import { FieldValidationError } from '@collect/contracts';
import { isEncryptedRoot, manifestFromXml, type EnvelopeManifest } from '../encryption/manifest.js';
import type { FormEntity } from '../forms/form.entity.js';
import type { UploadedFile } from '../openrosa/multipart.js';
import type { XmlNode } from '../openrosa/xml.js';
import { EnvelopeDecryption, type AnswerRecord, type InstanceReader } from './envelope-decryption.js';
import { FormVersionKeys } from './form-version-keys.js';
import { EnvelopeRepository } from './envelope.repository.js';

/** The MIME type of every stored part: ciphertext says nothing of what it holds. */
export const PART_MIMETYPE = 'application/octet-stream';

/**
 * What intake stores for an instance (the submissions service's `content`): a record of answers
 * by xpath, the instance XML, its files and the form version it names.
 */
export interface IntakeContent {
  record: AnswerRecord;
  xml?: string;
  files: UploadedFile[];
  version?: string;
}

/** What the submissions service answers for a stored instance (only these fields are read). */
export interface StoredInstance {
  outcome: 'created' | 'updated' | 'duplicate';
  submission: { id: number; formId: number };
}

/** The encryption members of an envelope's stored record (strings at intake; see `stored`). */
const PENDING_RECORD = { _encrypted: 'true', _decryption: 'pending' } as const;

/**
 * OpenRosa intake of encrypted envelopes (docs/encryption.md "Intake"). Every OpenRosa instance
 * goes through `receive`: a plaintext one to a form version that carries no key is stored as
 * before; an envelope to a form version with a key is stored whole, its `.enc` parts as
 * attachments; anything else is a 400 saying which. After the store, the envelope gets its row,
 * and in server mode it is decrypted as soon as its last part is there.
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
    const content = (): IntakeContent => ({ record: { 'meta/instanceID': m.instanceId, ...PENDING_RECORD }, xml: input.xml, files: input.files, version: m.version ?? undefined });
    const result = await input.store(content);
    await this.stored(result, form, m, input.xml, parts, key.keyId, input.readInstance);
    return result;
  }

  /**
   * The envelope row of a stored envelope (the first send's; later sends keep it), with the
   * record's `_encrypted` turned into JSON's true; then, when the key is the server's and every
   * part is there, decryption on receipt. A failure here never fails the intake: the submission
   * is stored, its envelope stays `pending`, and the next send of it tries again.
   */
  private async stored(result: StoredInstance, form: FormEntity, m: EnvelopeManifest, xml: string, parts: string[], keyId: string, readInstance: InstanceReader): Promise<void> {
    const submissionId = result.submission.id;
    try {
      await this.envelopes.insertIfAbsent({ submissionId, formId: form.id, version: m.version, instanceId: stripScheme(m.instanceId), keyId, manifest: xml, parts });
      await this.decryption.decryptIfReady(submissionId, form, readInstance);
    } catch (err) {
      this.logger.error({ err: errorSummary(err), submissionId }, 'could not record or decrypt an encrypted submission; it stays pending');
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

function refusal(message: string): FieldValidationError {
  return new FieldValidationError({ xml_submission_file: [message] });
}

/** The error's name and message only: never its properties, which could hold bytes of a key or a part. */
export function errorSummary(err: unknown): { name: string; message: string } {
  return err instanceof Error ? { name: err.name, message: err.message } : { name: 'Error', message: String(err) };
}
