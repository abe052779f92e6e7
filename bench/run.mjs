// Runs the benchmark scripts under bench/ (files named *.bench.mjs) one after the other, then
// prints one table of every result line they printed: the measure, its value, its goal and
// whether the goal is met. A result line is `<label>: <value>[ unit] (goal <op> <target>)`
// (report() in bench-helpers.mjs), `... (no goal set)`, or a legacy line starting `ratio`.
// A subset: `pnpm bench submissions soak` or BENCH_ONLY=submissions,soak (names contain the word).
// Exit status 1 when a script fails or prints no result; a missed goal is reported, not fatal:
// the benches are instruments, and the goals of open issues are not met yet.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

console.log(`node ${process.version}`);
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
const table = [['bench', 'measure', 'value', 'goal', 'met'], ...rows.map((r) => [r.bench, r.label, r.value, r.goal ?? '-', r.met === undefined ? '-' : r.met ? 'yes' : 'NO'])];
const widths = table[0].map((_, c) => Math.max(...table.map((row) => row[c].length)));
for (const [i, row] of table.entries()) {
  console.log(row.map((cell, c) => cell.padEnd(widths[c])).join('  ').trimEnd());
  if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
}
const withGoal = rows.filter((r) => r.met !== undefined);
console.log(`\n${withGoal.filter((r) => r.met).length} of ${withGoal.length} goals met`);
for (const f of failures) console.log(f);
process.exit(failures.length ? 1 : 0);

/** `label: 0.42 unit (goal >= 0.5)` → { label, value, goal, met }; null for other lines. */
function parseResult(line) {
  const m = /^(.+?): (-?\d+(?:\.\d+)?|NaN)( [^\s(]+)?(?: \((.*)\))?\s*$/.exec(line.trim());
  if (!m) return null;
  const [, label, number, unit = '', note = ''] = m;
  const goal = /\bgoal (<=|>=|<|>) (-?\d+(?:\.\d+)?)/.exec(note);
  if (!goal && !/^ratio /.test(label) && note !== 'no goal set') return null;
  const value = Number(number);
  const target = goal ? Number(goal[2]) : undefined;
  const met = goal ? { '<=': value <= target, '>=': value >= target, '<': value < target, '>': value > target }[goal[1]] : undefined;
  return { label, value: `${number}${unit}`, goal: goal ? `${goal[1]} ${goal[2]}${unit}` : undefined, met };
}
