import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiText } from '@collect/platform';
import { collectOpenApiDocument } from './openapi-document.js';

/** `pnpm openapi`: writes docs/openapi/collect-api.json from the code (checked in; a test compares). */
const target = fileURLToPath(new URL('../../../docs/openapi/collect-api.json', import.meta.url));

writeFileSync(target, openApiText(await collectOpenApiDocument()));
process.stdout.write(`wrote ${target}\n`);
