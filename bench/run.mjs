// Runs every benchmark script under bench/ (files named *.bench.mjs) one after the other.
// Each script prints its own result lines; the runner echoes the lines that carry a ratio
// ("ratio") at the end so a reader sees every comparison in one place.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const scripts = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

if (scripts.length === 0) {
  console.log('no benchmarks under bench/ (files named *.bench.mjs)');
  process.exit(0);
}

// pnpm puts the project's Node 24 (node-linux-<arch> from npm) first on PATH; every benchmark runs on it.
console.log(`node ${process.version}`);
const summary = [];
let failed = 0;
for (const script of scripts) {
  console.log(`\n=== ${script}`);
  const res = spawnSync(process.execPath, [join(here, script)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  process.stdout.write(res.stdout ?? '');
  const ratios = (res.stdout ?? '').split('\n').filter((l) => /ratio/i.test(l));
  if (res.status !== 0) {
    failed++;
    summary.push(`${script}: FAILED (exit ${res.status})`);
  } else if (ratios.length === 0) {
    failed++;
    summary.push(`${script}: printed no ratio line`);
  } else {
    for (const line of ratios) summary.push(`${script}: ${line.trim()}`);
  }
}
console.log('\n=== ratios');
for (const line of summary) console.log(line);
process.exit(failed ? 1 : 0);
