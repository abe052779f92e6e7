import { Injectable } from '@nestjs/common';
import { CollectConfig } from '../config/collect-config.js';
import { parseManifest } from '../encryption/manifest.js';
import type { FormEntity } from '../forms/form.entity.js';
import { FormEncryptionRepository } from '../form-encryption/form-encryption.repository.js';
import { mediaDownloadUrls } from '../wire-formats/media-urls.js';
import { EnvelopeRepository } from './envelope.repository.js';
import { FormVersionKeys } from './form-version-keys.js';

/** A rest service's `encrypted_submissions` (docs/encryption.md "Forwarding"). */
export const ENCRYPTED_SUBMISSIONS = ['skip', 'envelope', 'decrypted'] as const;
export type EncryptedSubmissionsPolicy = (typeof ENCRYPTED_SUBMISSIONS)[number];

/**
 * How often a delivery waiting for a server-mode submission's decryption looks again: soon at
 * first (decryption on receipt takes milliseconds once the last part is in), then less often
 * (a part still to come may take minutes): a quarter of the envelope's age, 1 to 30 s.
 */
function waitStepMs(ageMs: number): number {
  return Math.min(30_000, Math.max(1_000, ageMs / 4));
}

/**
 * What a delivery of an encrypted submission does: `as-is` (not an encrypted submission: the
 * usual payload), `skip` (with the reason, for the delivery log), `wait` (a server-mode envelope
 * not decrypted yet: back to the outbox until `retryAt`), `decrypted` (send the submission as it
 * is now, decrypted), or `envelope` (send `json`, the envelope payload).
 */
export type ForwardingVerdict =
  | { action: 'as-is' }
  | { action: 'skip'; reason: string }
  | { action: 'wait'; retryAt: Date }
  | { action: 'decrypted' }
  | { action: 'envelope'; json: Record<string, unknown> };

/** Members of the submission JSON an envelope payload keeps: the metadata, never answers. */
function isMetadataMember(key: string): boolean {
  return key.startsWith('_') || key === 'formhub/uuid' || key === 'meta/instanceID';
}

/**
 * Rest services and encrypted submissions (docs/encryption.md "Forwarding"). A service's
 * `encrypted_submissions` decides: `skip` (the default unless the server holds the key),
 * `envelope` (generic_json: the metadata with the manifest's key, signature, XML part name and
 * the parts' download addresses), or `decrypted` (server mode, and its default there: the usual
 * payload once decrypted on receipt).
 */
@Injectable()
export class EnvelopeForwarding {
  constructor(
    private readonly envelopes: EnvelopeRepository,
    private readonly keys: FormEncryptionRepository,
    private readonly versionKeys: FormVersionKeys,
    private readonly config: CollectConfig,
  ) {}

  /** Why a service of kind `name` on `form` cannot take `policy`, or null. */
  async policyProblem(policy: EncryptedSubmissionsPolicy, name: string, form: FormEntity): Promise<string | null> {
    if (policy === 'envelope' && name !== 'generic_json') return 'envelope is sent by generic_json services only.';
    if (policy !== 'decrypted') return null;
    const keyId = this.versionKeys.currentKeyOf(form);
    const key = keyId ? await this.keys.find(form.id, keyId) : null;
    return key?.mode === 'server' ? null : 'decrypted needs a form whose key the server holds (server mode); this form\'s current version is not in server mode.';
  }

  /**
   * The verdict for one delivery of `submissionId`, whose payload would be `json`. A plaintext
   * submission costs nothing: only a payload that says `_encrypted` is looked up.
   */
  async verdict(
    service: { name: string; encryptedSubmissions: EncryptedSubmissionsPolicy | null }, submission: { id: number; dateCreated: Date }, json: Record<string, unknown>, event: string,
  ): Promise<ForwardingVerdict> {
    if (json._encrypted === undefined || event === 'deleted') return { action: 'as-is' };
    const envelope = await this.envelopes.find(submission.id);
    if (!envelope) {
      // Stored, its envelope row not written yet (it follows the intake's statement, after decryption on receipt).
      const age = Date.now() - submission.dateCreated.getTime();
      if (age > this.config.FORWARD_MEDIA_WAIT_SECONDS * 1000) return { action: 'skip', reason: 'encrypted submission not sent: its envelope was never recorded' };
      return { action: 'wait', retryAt: new Date(Date.now() + waitStepMs(age)) };
    }
    const key = envelope.keyId ? await this.keys.find(envelope.formId, envelope.keyId) : null;
    const mode = key?.mode ?? 'self';
    const policy = service.encryptedSubmissions ?? (mode === 'server' ? 'decrypted' : 'skip');
    if (policy === 'skip') {
      const why = service.encryptedSubmissions ? 'this service\'s encrypted_submissions is "skip"' : `encrypted_submissions is not set, and the server cannot decrypt this form's ${mode}-mode submissions`;
      return { action: 'skip', reason: `encrypted submission not sent: ${why}` };
    }
    if (policy === 'envelope') return { action: 'envelope', json: await this.envelopePayload(envelope, json) };
    if (mode !== 'server') return { action: 'skip', reason: `encrypted submission not sent: encrypted_submissions is "decrypted", but this submission's key is in ${mode} mode and the server cannot decrypt it` };
    if (envelope.decryption === 'decrypted') return { action: 'decrypted' };
    if (envelope.decryption === 'failed') return { action: 'skip', reason: `encrypted submission not sent: its decryption failed (${envelope.decryptionError?.reason ?? 'unknown'})` };
    // Pending: its parts are still arriving. It waits as long as a split submission's media may.
    const deadline = envelope.createdAt.getTime() + this.config.FORWARD_MEDIA_WAIT_SECONDS * 1000;
    if (Date.now() >= deadline) return { action: 'skip', reason: `encrypted submission not sent: not decrypted after ${this.config.FORWARD_MEDIA_WAIT_SECONDS} s (parts missing)` };
    return { action: 'wait', retryAt: new Date(Math.min(deadline, Date.now() + waitStepMs(Date.now() - envelope.createdAt.getTime()))) };
  }

  /** The envelope payload: the metadata members of `json`, the manifest's fields, and the parts with their download addresses. */
  private async envelopePayload(envelope: NonNullable<Awaited<ReturnType<EnvelopeRepository['find']>>>, json: Record<string, unknown>): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(json)) if (isMetadataMember(k) && k !== '_attachments' && k !== '_geolocation') out[k] = v;
    out._encrypted = true;
    const manifest = parseManifest(envelope.manifest);
    const parts = new Map((await this.envelopes.partsOf([envelope.submissionId])).map((p) => [p.name, p]));
    out.base64EncryptedKey = manifest.ok ? manifest.value.base64EncryptedKey : null;
    out.base64EncryptedElementSignature = manifest.ok && manifest.value.encryptedSignature ? manifest.value.encryptedSignature.toString('base64') : null;
    out.encryptedXmlFile = manifest.ok ? manifest.value.xmlFile : null;
    out.files = envelope.parts.filter((name) => parts.has(name)).map((name) => {
      const p = parts.get(name)!;
      return { name, download_url: mediaDownloadUrls({ id: p.attachmentId, filename: p.path }, this.config.PUBLIC_BASE_URL, 'files').download_url };
    });
    return out;
  }
}
