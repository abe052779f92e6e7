import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { collectEnvSchema } from './collect-config.js';

const DOCS = fileURLToPath(new URL('../../../../docs/configuration.md', import.meta.url));

function schemaKeys(schema: z.ZodType): string[] {
  const s = schema as unknown as { shape?: Record<string, unknown>; in?: z.ZodType };
  if (s.shape) return Object.keys(s.shape);
  if (s.in) return schemaKeys(s.in);
  throw new Error('unexpected schema shape');
}

describe('collect-api configuration documentation', () => {
  it('lists every variable the service reads in docs/configuration.md', () => {
    const docs = readFileSync(DOCS, 'utf8');
    const missing = schemaKeys(collectEnvSchema).filter((key) => !docs.includes(`\`${key}\``));
    expect(missing).toEqual([]);
  });
});
