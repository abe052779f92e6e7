import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiText } from '@collect/platform';
import { casOpenApiDocument } from './openapi-document.js';

/** `pnpm openapi`: writes docs/openapi/cas.json from the code (checked in; a test compares). */
const target = fileURLToPath(new URL('../../../docs/openapi/cas.json', import.meta.url));
writeFileSync(target, openApiText(await casOpenApiDocument()));
process.stdout.write(`wrote ${target}\n`);
