import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openApiGaps, openApiText } from '@collect/platform';
import { collectOpenApiDocument } from './openapi-document.js';

const CHECKED_IN = fileURLToPath(new URL('../../../docs/openapi/collect-api.json', import.meta.url));

describe('OpenAPI document of collect-api', () => {
  it('docs/openapi/collect-api.json is what the code generates (run `pnpm openapi` after changing an endpoint or DTO)', async () => {
    const generated = openApiText(await collectOpenApiDocument());
    const checkedIn = readFileSync(CHECKED_IN, 'utf8');
    // The parsed comparison first: its diff names the operation or schema that drifted.
    expect(JSON.parse(checkedIn)).toEqual(JSON.parse(generated));
    expect(checkedIn).toBe(generated);
  });

  it('gives every operation its request body and a success and an error response with a schema', async () => {
    expect(openApiGaps(await collectOpenApiDocument(), /\/(retry(-failed)?|test)$/)).toEqual([]);
  });
});
