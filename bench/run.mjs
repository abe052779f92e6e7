// Runs the benchmark scripts under bench/ (files named *.bench.mjs) one after the other, then
// prints one table of every result line they printed: the measure, its value, its goal and
// whether the goal is met (bench-results.mjs reads the lines).
// A subset: `pnpm bench submissions soak` or BENCH_ONLY=submissions,soak (names contain the word).
// Exit status 1 when a script fails or prints no result; a missed goal is reported, not fatal:
// the benches are instruments, and a goal may be missed on a busy or slow machine.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseResult, summaryTable } from './bench-results.mjs';
import { machineLine } from './machine.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const only = [...process.argv.slice(2), ...(process.env.BENCH_ONLY ?? '').split(',').map((s) => s.trim()).filter(Boolean)];
const scripts = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();

if (scripts.length === 0) {
  console.log(`no benchmarks under bench/ (files named *.bench.mjs)${only.length ? ` matching ${only.join(', ')}` : ''}`);
  process.exit(only.length ? 1 : 0);
}

// pnpm puts the project's Node 24 (node-linux-<arch> from npm) first on PATH; every benchmark runs on it.
console.log(`node ${process.version}`);
console.log(machineLine());
const rows = [];
const failures = [];
const started = Date.now();
for (const script of scripts) {
  console.log(`\n=== ${script}`);
  const t0 = Date.now();
  const res = spawnSync(process.execPath, [join(here, script)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
  process.stdout.write(res.stdout ?? '');
  console.log(`(${script}: ${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  const results = (res.stdout ?? '').split('\n').map(parseResult).filter(Boolean);
  const bench = script.replace(/\.bench\.mjs$/, '');
  if (res.status !== 0) failures.push(`${bench}: FAILED (exit ${res.status ?? res.signal})`);
  else if (results.length === 0) failures.push(`${bench}: printed no result line`);
  for (const r of results) rows.push({ bench, ...r });
}

console.log(`\n=== summary (${((Date.now() - started) / 1000).toFixed(0)} s)`);
console.log(machineLine());
console.log(summaryTable(rows));
for (const f of failures) console.log(f);
process.exit(failures.length ? 1 : 0);
