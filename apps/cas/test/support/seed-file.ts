import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Writes a CAS seed document (clients, resources, users) to a fresh temporary file; its path, for CAS_SEED_FILE. */
export function writeSeedFile(seed: Record<string, unknown>): string {
  const path = join(mkdtempSync(join(tmpdir(), 'cas-seed-')), 'seed.json');
  writeFileSync(path, JSON.stringify(seed));
  return path;
}
