import { Injectable, NotFoundException } from '@nestjs/common';
import type { KeyObject } from 'node:crypto';
import { FieldValidationError, HttpErrorWithHeaders, NOT_FOUND_DETAIL } from '@collect/contracts';
import { WorkLimiter, WorkLimiterFullError } from '@collect/platform';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';
import { generateFormKeyPair, kekFromConfig, sealWithKek, sealWithPassphrase, type SealedPrivateKey } from '../encryption/key-sealing.js';
import { base64Spki, keyId, loadPublicKey } from '../encryption/rsa-keys.js';
import { submissionPublicKey, withSubmissionPublicKey } from '../encryption/xform-key.js';
import { FormAccessService } from '../forms/form-access.service.js';
import { FormsService } from '../forms/forms.service.js';
import { MIN_ROLE } from '../forms/roles.js';
import type { CreateFormEncryptionDto, FormEncryptionBody } from './form-encryption.dto.js';
import { FormEncryptionRepository } from './form-encryption.repository.js';

/**
 * Gives a form a key (docs/encryption.md "Modes"): a new form version whose XForm carries the
 * public key in `<submission base64RsaPublicKey>`, and, in passphrase and server modes, the
 * private key the platform made, sealed. Owner or manager. A key pair and an argon2id
 * derivation cost a core for a fraction of a second and 64 MiB: at most two run at once in a
 * process, eight wait, the rest get 503 at once. Like the decrypt export (DecryptExportService)
 * it opens with the form's role check and keeps no state of its own: the two read alike on
 * purpose, each one route's rules.
 */
@Injectable()
export class FormEncryptionService {
  private readonly keyWork = new WorkLimiter('form-key-sealing', 2, 8);

  constructor(
    private readonly keys: FormEncryptionRepository,
    private readonly forms: FormsService,
    private readonly access: FormAccessService,
    private readonly config: CollectConfig,
  ) {}

  async create(user: AuthenticatedUser, pk: string, dto: CreateFormEncryptionDto): Promise<FormEncryptionBody> {
    // 404 when the form is not visible to the caller, 403 below owner or manager.
    const { form } = await this.access.requireRole(user, pk, MIN_ROLE.share);

    let publicKey: KeyObject;
    let sealed: SealedPrivateKey | null = null;
    if (dto.mode === 'self') {
      const loaded = loadPublicKey(dto.public_key ?? '');
      if (!loaded.ok) throw new FieldValidationError({ public_key: [loaded.failure.message] });
      publicKey = loaded.value;
    } else {
      const kek = dto.mode === 'server' ? kekFromConfig(this.config.ENCRYPTION_KEK) : null;
      if (dto.mode === 'server' && !kek) throw new FieldValidationError({ mode: ['Server mode is not available: the server has no ENCRYPTION_KEK configured (docs/configuration.md). Use self or passphrase mode.'] });
      const made = await this.limited(async () => {
        const pair = await generateFormKeyPair();
        return { publicKey: pair.publicKey, sealed: kek ? sealWithKek(pair.privateKey, kek) : await sealWithPassphrase(pair.privateKey, dto.passphrase!) };
      });
      publicKey = made.publicKey;
      sealed = made.sealed;
    }

    const spki = base64Spki(publicKey);
    const id = keyId(publicKey);
    const current = await this.forms.getDocument(user, String(form.id));
    const xml = withSubmissionPublicKey(current.xml, spki);
    if (xml === null) throw new FieldValidationError({ mode: ['The form\'s XForm has no <model> in its <h:head>, so no key can be added to it.'] });
    const existed = await this.keys.find(form.id, id);
    await this.keys.insert({ form_id: form.id, key_id: id, mode: dto.mode, hint: dto.hint ?? null, public_key: spki, sealed, created_by: user.id });
    try {
      await this.forms.replace(user, String(form.id), { xml });
    } catch (err) {
      if (!existed) await this.keys.removeUnused(form.id, id, spki);
      throw err;
    }
    return this.get(user, String(form.id));
  }

  /** The key of the form's current version; 404 when that version is not encrypted. */
  async get(user: AuthenticatedUser | undefined, pk: string): Promise<FormEncryptionBody> {
    const form = await this.forms.getDocument(user, pk);
    const spki = submissionPublicKey(form.xml);
    if (!spki) throw new NotFoundException(NOT_FOUND_DETAIL);
    const loaded = loadPublicKey(spki);
    const row = loaded.ok ? await this.keys.find(form.id, keyId(loaded.value)) : null;
    const first = await this.keys.firstVersionWith(form.id, spki);
    // A key put in the XForm itself (the XLSForm setting public_key) is a self-mode key.
    return {
      mode: row?.mode ?? 'self',
      hint: row?.hint ?? null,
      public_key: spki,
      version: first?.version ?? form.version,
      created_at: (row?.created_at ?? first?.date_created ?? form.dateModified).toISOString(),
    };
  }

  private async limited<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await this.keyWork.run(task);
    } catch (err) {
      if (err instanceof WorkLimiterFullError) throw new HttpErrorWithHeaders(503, 'The server is busy making keys; try again shortly.', { 'Retry-After': '1' });
      throw err;
    }
  }
}
