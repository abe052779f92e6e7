import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { postgresCanReach, sharedDir } from '@collect/embedded';

/**
 * Where `pnpm start` keeps the embedded PostgreSQL cluster (docs/operations.md, "Embedded
 * PostgreSQL"): `<DATA_DIR>/pg`, by default `.data/pg` in the checkout. As root the server runs
 * as the OS user `postgres`, which cannot enter a checkout in a private folder (a home folder,
 * mode 0700); then, unless DATA_DIR was chosen, the cluster lives in a folder of its own under
 * /var/tmp/collect-platform named after the checkout (its name and a hash of its path), so each
 * checkout keeps its own data between runs.
 */
export function embeddedPostgresDir(root: string, dataDirVar: string | undefined): { dir: string; note?: string } {
  const dataDir = resolve(dataDirVar ?? join(root, '.data'));
  mkdirSync(dataDir, { recursive: true, mode: 0o755 });
  if (postgresCanReach(dataDir)) return { dir: join(dataDir, 'pg') };
  if (dataDirVar) {
    throw new Error(`DATA_DIR: PostgreSQL runs as the OS user "postgres", which cannot enter ${dataDir}; choose a folder whose parents it can enter (mode 0755)`);
  }
  const real = realpathSync(root);
  const name = `${basename(real).replace(/[^A-Za-z0-9._-]/g, '_')}-${createHash('sha256').update(real).digest('hex').slice(0, 12)}`;
  const dir = join(sharedDir(`data-${name}`), 'pg');
  return { dir, note: `PostgreSQL runs as the OS user "postgres", which cannot enter ${dataDir} (a private folder): its data is kept in ${dir}` };
}
