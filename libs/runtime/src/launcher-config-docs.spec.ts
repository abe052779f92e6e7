import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { launcherEnvSchema } from './launcher-config.js';

const DOCS = fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url));

describe('pnpm start configuration documentation', () => {
  it('lists every variable the launcher reads in the "pnpm start" section of docs/configuration.md', () => {
    const docs = readFileSync(DOCS, 'utf8');
    const section = docs.slice(docs.indexOf('## pnpm start'));
    const keys = Object.keys((launcherEnvSchema as unknown as { in: { shape: Record<string, unknown> } }).in.shape);
    expect(keys).toContain('COLLECT_PORT');
    expect(keys.filter((key) => !section.includes(`\`${key}\``))).toEqual([]);
  });
});
