import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** docs/configuration.md of this repository. */
export const CONFIGURATION_DOC = fileURLToPath(new URL('../../../docs/configuration.md', import.meta.url));

/** The variable names of a zod object schema, also behind a `.pipe()`/`.transform()` (zod 4 keeps the input schema in `in`). */
export function envSchemaKeys(schema: unknown): string[] {
  const s = schema as { shape?: Record<string, unknown>; in?: unknown };
  if (s.shape) return Object.keys(s.shape);
  if (s.in) return envSchemaKeys(s.in);
  throw new Error('unexpected schema shape');
}

/**
 * The variables of `schema` that docs/configuration.md does not name in backticks (from the
 * heading `fromHeading` on, when given). Every service's config test expects this to be empty.
 */
export function undocumentedVariables(schema: unknown, fromHeading?: string): string[] {
  const docs = readFileSync(CONFIGURATION_DOC, 'utf8');
  const section = fromHeading === undefined ? docs : docs.slice(docs.indexOf(fromHeading));
  return envSchemaKeys(schema).filter((key) => !section.includes(`\`${key}\``));
}
