import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../profile-top.mjs', import.meta.url));

// A V8 cpuprofile by hand: root → handler (app.js) → writev (native), root → parse (pkg in node_modules).
// Samples every 1,000 µs from t = 1,000,000 µs; a sample's self time is the delta to the next one.
function profile() {
  return {
    startTime: 1_000_000,
    endTime: 1_010_000,
    nodes: [
      { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2, 4] },
      { id: 2, callFrame: { functionName: 'handler', url: 'file:///srv/app.js', lineNumber: 9 }, children: [3] },
      { id: 3, callFrame: { functionName: 'writev', url: '', lineNumber: -1 }, children: [] },
      { id: 4, callFrame: { functionName: 'parse', url: 'file:///srv/node_modules/.pnpm/pg@8.0.0/node_modules/pg/lib/result.js', lineNumber: 81 }, children: [] },
    ],
    // t = 1,001,000 ... 1,010,000: four writev, three parse, three handler samples
    samples: [3, 3, 3, 3, 4, 4, 4, 2, 2, 2],
    timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
}

describe('bench/profile-top.mjs', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'profile-top-'));
    writeFileSync(join(dir, 'demo.api.cpuprofile'), JSON.stringify(profile()));
    // The first four samples (writev) only: t in [1,000,500, 1,004,500).
    writeFileSync(join(dir, 'demo.windows.json'), JSON.stringify({ early: [[1_000_500, 1_004_500]], late: [[1_007_500, 1_011_000]] }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (...args: string[]) => spawnSync(process.execPath, [SCRIPT, join(dir, 'demo.api.cpuprofile'), ...args], { encoding: 'utf8' });

  it('ranks functions by self time and sums it by package', () => {
    const out = run('--top', '3', '--callers', 'writev');
    expect(out.status).toBe(0);
    const lines = out.stdout.split('\n');
    // 10 samples, the last has no next delta: 9 ms sampled.
    expect(lines[0]).toMatch(/: 9 ms sampled$/);
    expect(lines.slice(2, 5).map((l) => l.trim())).toEqual([
      expect.stringMatching(/^4 ms\s+44\.4 %\s+writev$/),
      expect.stringMatching(/^3 ms\s+33\.3 %\s+parse {2}\/srv\/node_modules\/pg\/lib\/result\.js:82$/),
      expect.stringMatching(/^2 ms\s+22\.2 %\s+handler {2}\/srv\/app\.js:10$/),
    ]);
    expect(out.stdout).toMatch(/self time by package:\n\s+4 ms\s+44\.4 %\s+\(native\)\n\s+3 ms\s+33\.3 %\s+pg\n/);
    expect(out.stdout).toMatch(/self time of writev by caller:\n\s+4 ms\s+44\.4 %\s+handler {2}\/srv\/app\.js:10\n/);
  });

  it('keeps only the samples of a named window', () => {
    const early = run('--window', 'early');
    expect(early.status).toBe(0);
    expect(early.stdout).toMatch(/window "early" \(1 parts\): 4 ms sampled/);
    expect(early.stdout).not.toMatch(/parse|handler/);
    const late = run('--window', 'late');
    expect(late.stdout).toMatch(/: 2 ms sampled/);
    expect(late.stdout).toMatch(/100\.0 %\s+handler/);
  });

  it('names the windows there are when asked for another', () => {
    const out = run('--window', 'nope');
    expect(out.status).not.toBe(0);
    expect(out.stderr).toMatch(/no window "nope".*there are: early, late/);
  });
});
