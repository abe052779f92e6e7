import { kekId, openWithKek, sealWithKek } from '../encryption/key-sealing.js';
import { KekRotationRepository } from './kek-rotation.repository.js';

export interface RekeyResult {
  /** Rows sealed under the previous KEK, now sealed under the current one. */
  resealed: number;
  /** Rows already sealed under the current KEK (a second run finds every row here). */
  current: number;
  /** Rows neither KEK opens, by form and key id and the id of the KEK that sealed them: left as they are. */
  unopened: Array<{ form_id: number; key_id: string; kek_id: string }>;
}

/**
 * Re-seals every `server`-mode private key sealed under `previous` under `kek` (docs/encryption.md
 * "Rotating ENCRYPTION_KEK"): opened with the previous KEK (GCM and the key id checked), sealed
 * again with a fresh IV, each row replaced only if unchanged since it was read. Idempotent; a row
 * neither key opens is reported, never changed. The private keys are in memory one at a time.
 */
export async function resealServerKeys(repo: KekRotationRepository, kek: Buffer, previous: Buffer | null): Promise<RekeyResult> {
  const result: RekeyResult = { resealed: 0, current: 0, unopened: [] };
  const currentId = kekId(kek);
  for (const row of await repo.serverKeys()) {
    const sealedBy = row.sealed.sealed_by === 'kek' ? row.sealed.kek_id : '';
    if (sealedBy === currentId && openWithKek(row.sealed, kek).ok) {
      result.current++;
      continue;
    }
    const opened = previous ? openWithKek(row.sealed, previous) : null;
    if (!opened?.ok) {
      result.unopened.push({ form_id: row.form_id, key_id: row.key_id, kek_id: sealedBy });
      continue;
    }
    if (await repo.replaceSealed(row, sealWithKek(opened.value, kek))) result.resealed++;
    else result.current++;
  }
  return result;
}
