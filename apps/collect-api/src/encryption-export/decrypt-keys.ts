import { Injectable } from '@nestjs/common';
import type { KeyObject } from 'node:crypto';
import { FieldValidationError, HttpErrorWithHeaders } from '@collect/contracts';
import { WorkLimiter, WorkLimiterFullError } from '@collect/platform';
import { openWithPassphrase } from '../encryption/key-sealing.js';
import { keyId, loadPrivateKey } from '../encryption/rsa-keys.js';
import { FormEncryptionRepository } from '../form-encryption/form-encryption.repository.js';
import { DecryptExportRepository } from './decrypt-export.repository.js';

/** Passphrase-sealed keys of one form tried per request: a form gets a new key per version, rarely many. */
const MAX_SEALED_TRIED = 16;

/**
 * The private keys a decrypt request opens, by key id (docs/encryption.md "Decrypting without a
 * server-held key"). A private key must be the key of some envelope of the form; a passphrase
 * must open at least one of the form's passphrase-sealed keys. Otherwise 400. The key material
 * stays in this request's memory: nothing here stores, logs or queues it. Each passphrase try is
 * an argon2id derivation (64 MiB, a core for a fraction of a second): at most two run at once in
 * a process and eight wait, the rest get 503 at once.
 */
@Injectable()
export class DecryptKeys {
  private readonly work = new WorkLimiter('decrypt-passphrase', 2, 8);

  constructor(
    private readonly repo: DecryptExportRepository,
    private readonly keys: FormEncryptionRepository,
  ) {}

  async open(formId: number, currentKeyId: string | null, given: { passphrase?: string; private_key?: string }): Promise<Map<string, KeyObject>> {
    if (given.passphrase !== undefined && given.private_key !== undefined) {
      throw new FieldValidationError({ private_key: ['Give either passphrase (passphrase mode) or private_key (self mode), not both.'] });
    }
    const formKeys = new Set(await this.repo.envelopeKeyIds(formId));
    if (currentKeyId) formKeys.add(currentKeyId);
    if (given.private_key !== undefined) {
      const loaded = loadPrivateKey(given.private_key);
      if (!loaded.ok) throw new FieldValidationError({ private_key: [loaded.failure.message] });
      const id = keyId(loaded.value);
      if (!formKeys.has(id)) throw new FieldValidationError({ private_key: ['This private key is not the key of any version of this form, nor of any of its encrypted submissions.'] });
      return new Map([[id, loaded.value]]);
    }
    const opened = new Map<string, KeyObject>();
    let sealedRows = 0;
    for (const id of formKeys) {
      const row = await this.keys.find(formId, id);
      if (!row || row.mode !== 'passphrase' || !row.sealed) continue;
      if (++sealedRows > MAX_SEALED_TRIED) break;
      const key = await this.limited(() => openWithPassphrase(row.sealed!, given.passphrase!));
      if (key.ok) opened.set(id, key.value);
    }
    if (!sealedRows) throw new FieldValidationError({ passphrase: ['This form has no passphrase-sealed key: decrypt with the private key (self mode), or its data is decrypted on receipt (server mode).'] });
    if (!opened.size) throw new FieldValidationError({ passphrase: ['The passphrase does not open this form\'s private key.'] });
    return opened;
  }

  private async limited<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await this.work.run(task);
    } catch (err) {
      if (err instanceof WorkLimiterFullError) throw new HttpErrorWithHeaders(503, 'The server is busy opening keys; try again shortly.', { 'Retry-After': '1' });
      throw err;
    }
  }
}
