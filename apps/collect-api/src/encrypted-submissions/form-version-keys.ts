import { createHash, createPublicKey } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { keyId } from '../encryption/rsa-keys.js';
import { submissionPublicKey } from '../encryption/xform-key.js';
import type { FormEntity } from '../forms/form.entity.js';
import { EnvelopeRepository } from './envelope.repository.js';

/** Form versions whose key was looked up lately, per process (a key never changes within a version). */
const KEPT = 2_000;

/** The key of one form version: `known` false when the form has no such version. */
export interface VersionKey {
  known: boolean;
  /** keyId() of the version's `base64RsaPublicKey`, null when the version carries none. */
  keyId: string | null;
}

/**
 * Which key a form version carries (docs/encryption.md "Keys and form versions"), from its XForm's
 * `<submission base64RsaPublicKey>`. Each plaintext submission asks for its form's current
 * version, so the answer is kept per (form, version, modification time): one scan of the XForm
 * per version, not per submission.
 */
@Injectable()
export class FormVersionKeys {
  private readonly current = new Map<string, string | null>();
  private readonly older = new Map<string, VersionKey>();

  constructor(private readonly envelopes: EnvelopeRepository) {}

  /** The key of the form's current version (its XForm is at hand: no query). */
  currentKeyOf(form: Pick<FormEntity, 'id' | 'version' | 'xml' | 'dateModified'>): string | null {
    const cacheKey = `${form.id}\n${form.version}\n${form.dateModified.getTime()}`;
    const hit = this.current.get(cacheKey);
    if (hit !== undefined) return hit;
    const id = keyIdOfXform(form.xml);
    remember(this.current, cacheKey, id);
    return id;
  }

  /** The key of version `version` of the form (the current one, or an older one read once). */
  async keyOf(form: Pick<FormEntity, 'id' | 'version' | 'xml' | 'dateModified'>, version: string): Promise<VersionKey> {
    if (version === form.version) return { known: true, keyId: this.currentKeyOf(form) };
    const cacheKey = `${form.id}\n${version}`;
    const hit = this.older.get(cacheKey);
    if (hit) return hit;
    const xml = await this.envelopes.versionXml(form.id, version);
    const found: VersionKey = xml === null ? { known: false, keyId: null } : { known: true, keyId: keyIdOfXform(xml) };
    // An unknown version may be published later: only known ones are kept.
    if (found.known) remember(this.older, cacheKey, found);
    return found;
  }
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  if (map.size >= KEPT) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/** keyId() of the XForm's public key; for a key that does not parse, the hash of its bytes (still "encrypted"). */
export function keyIdOfXform(xml: string): string | null {
  const spki = submissionPublicKey(xml);
  if (!spki) return null;
  const der = Buffer.from(spki, 'base64');
  try {
    return keyId(createPublicKey({ key: der, format: 'der', type: 'spki' }));
  } catch {
    return createHash('sha256').update(der).digest('base64url');
  }
}
