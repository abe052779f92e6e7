import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkImports, isTestCode, LAYERS, LIBRARY_LAYERS, readImportGraph } from '../check-layers.mjs';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const API = 'apps/collect-api/src';

describe('check:layers on made-up import graphs', () => {
  it('fails an import from a lower layer to a higher one, and passes the reverse', () => {
    const sut = checkImports([
      { from: `${API}/forms/forms.service.ts`, to: `${API}/submissions/submission-json.ts` },
      { from: `${API}/submissions/submissions.service.ts`, to: `${API}/forms/forms.repository.ts` },
    ]);
    expect(sut).toEqual([expect.objectContaining({ kind: 'upward', from: `${API}/forms/forms.service.ts` })]);
  });

  it('fails a migration importing feature code: a migration may use only helpers below the features', () => {
    const sut = checkImports([
      { from: `${API}/migrations/1764710000000-form-versions.ts`, to: `${API}/forms/forms.service.ts` },
      { from: `${API}/migrations/1764710000000-form-versions.ts`, to: `${API}/openrosa/xform-edit.ts` },
    ]);
    expect(sut).toEqual([expect.objectContaining({ kind: 'upward', to: `${API}/forms/forms.service.ts` })]);
  });

  it('fails an import between two folders of one layer (a loop waiting to happen)', () => {
    const sut = checkImports([{ from: `${API}/oauth2/token.controller.ts`, to: `${API}/profiles/profiles.controller.ts` }]);
    expect(sut.map((p) => p.kind)).toEqual(['sibling']);
  });

  it('fails production code importing test code: a test/ file, a spec, @collect/testing', () => {
    const sut = checkImports([
      { from: `${API}/storage/file-storage.ts`, to: 'apps/collect-api/test/submissions-s3rver.ts' },
      { from: `${API}/forms/forms.service.ts`, to: `${API}/forms/form-definition.spec.ts` },
      { from: 'libs/runtime/src/start.ts', to: '@collect/testing' },
      { from: 'libs/jwt-validation/src/nest.ts', to: 'libs/jwt-validation/src/testing/local-issuer.ts' },
    ]);
    expect(sut.map((p) => p.kind)).toEqual(['test-code', 'test-code', 'test-code', 'test-code']);
  });

  it('fails files that import each other in a circle (type-only imports too), test code aside', () => {
    const sut = checkImports([
      { from: `${API}/storage/file-sender.ts`, to: `${API}/storage/file-storage.ts` },
      { from: `${API}/storage/file-storage.ts`, to: `${API}/storage/byte-range.ts` },
      { from: `${API}/storage/byte-range.ts`, to: `${API}/storage/file-sender.ts` },
      { from: `${API}/forms/forms.service.spec.ts`, to: `${API}/forms/forms.service.ts` },
      { from: `${API}/forms/forms.service.ts`, to: `${API}/forms/forms.service.spec.ts` },
    ]);
    expect(sut.filter((p) => p.kind === 'cycle').map((p) => p.message)).toEqual([
      `import circle: ${API}/storage/byte-range.ts -> ${API}/storage/file-sender.ts -> ${API}/storage/file-storage.ts -> ${API}/storage/byte-range.ts`,
    ]);
  });

  it('lets test code import anything', () => {
    expect(checkImports([
      { from: `${API}/storage/file-storage.spec.ts`, to: 'apps/collect-api/test/submissions-s3rver.ts' },
      { from: 'apps/collect-api/test/forms.e2e.ts', to: `${API}/main.ts` },
      { from: 'libs/testing/src/service.ts', to: '@collect/embedded' },
    ])).toEqual([]);
  });

  it('fails a library importing a higher library or a service, and a folder the order does not place', () => {
    const sut = checkImports([
      { from: 'libs/contracts/src/index.ts', to: '@collect/platform' },
      { from: 'libs/platform/src/index.ts', to: `${API}/config/collect-config.ts` },
      { from: `${API}/forms/forms.service.ts`, to: `${API}/brand-new/thing.ts` },
      { from: `${API}/forms/forms.service.ts`, to: '@collect/runtime' },
    ]);
    expect(sut.map((p) => p.kind)).toEqual(['upward', 'upward', 'unplaced', 'upward']);
  });

  it('reads test code by path', () => {
    expect(['apps/cas/test/test-app.ts', 'libs/testing/src/redis.ts', `${API}/auth/secrets.spec.ts`].every(isTestCode)).toBe(true);
    expect([`${API}/auth/secrets.ts`, 'libs/embedded/src/postgres.ts'].some(isTestCode)).toBe(false);
  });
});

describe('check:layers on this repository', () => {
  it('finds no import running up a layer and no test code in production code', () => {
    const edges = readImportGraph(REPO);
    expect(edges.length).toBeGreaterThan(500);
    expect(checkImports(edges).map((p) => p.message)).toEqual([]);
  });

  it('uses the layer order docs/architecture.md writes down', () => {
    const doc = readFileSync(`${REPO}/docs/architecture.md`, 'utf8');
    for (const [root, layers] of Object.entries(LAYERS)) {
      const line = doc.split('\n').find((l) => l.startsWith(`- \`${root}\`:`));
      expect(line).toBe(`- \`${root}\`: ${layers.map((layer) => layer.join(', ')).join(' < ')}`);
    }
    const libs = doc.split('\n').find((l) => l.startsWith('- `libs`:'));
    expect(libs).toBe(`- \`libs\`: ${LIBRARY_LAYERS.map((layer) => layer.join(', ')).join(' < ')}`);
  });
});
