import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { releaseStartUpMemory } from './start-up-memory.js';

// The built module, as the services load it (pnpm test builds first).
const BUILT = fileURLToPath(new URL('../dist/start-up-memory.js', import.meta.url));

/**
 * A process that grows its young generation as a service's start-up does (objects that survive),
 * then calls releaseStartUpMemory: answers the new space's size before and after, in bytes.
 */
function youngGenerationAround(nodeArgs: string[]): { ran: boolean; before: number; after: number } {
  const script = `
    import v8 from 'node:v8';
    import { releaseStartUpMemory } from ${JSON.stringify(BUILT)};
    const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
    let kept = [];
    for (let i = 0; i < 300000; i++) { kept.push({ i, s: 'x' + i }); if (kept.length > 100000) kept = kept.slice(50000); }
    kept = null;
    const before = young();
    const ran = releaseStartUpMemory();
    console.log(JSON.stringify({ ran, before, after: young() }));`;
  const child = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  if (child.status !== 0) throw new Error(child.stderr);
  return JSON.parse(child.stdout) as { ran: boolean; before: number; after: number };
}

describe('releaseStartUpMemory', () => {
  it('shrinks the young generation that start-up grew, under --expose-gc (the images)', () => {
    const { ran, before, after } = youngGenerationAround(['--expose-gc', '--max-semi-space-size=16']);
    expect(ran).toBe(true);
    expect(before).toBeGreaterThanOrEqual(16 * 2 ** 20);
    expect(after).toBeLessThanOrEqual(before / 8);
  });

  it('does nothing without --expose-gc (tests, pnpm start)', () => {
    const { ran, before, after } = youngGenerationAround(['--max-semi-space-size=16']);
    expect(ran).toBe(false);
    expect(after).toBe(before);
    expect(releaseStartUpMemory()).toBe(typeof (globalThis as { gc?: unknown }).gc === 'function');
  });
});
