import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiGaps, openApiText } from '@collect/platform';
import { casOpenApiDocument } from './openapi-document.js';

const CHECKED_IN = fileURLToPath(new URL('../../../docs/openapi/cas.json', import.meta.url));

describe('OpenAPI document of the CAS', () => {
  it('docs/openapi/cas.json is what the code generates (run `pnpm openapi` after changing an endpoint or DTO)', async () => {
    const generated = openApiText(await casOpenApiDocument());
    const checkedIn = readFileSync(CHECKED_IN, 'utf8');
    expect(JSON.parse(checkedIn)).toEqual(JSON.parse(generated));
    expect(checkedIn).toBe(generated);
  });

  it('gives every operation a success and an error response with a schema', async () => {
    expect(openApiGaps(await casOpenApiDocument())).toEqual([]);
  });
});
