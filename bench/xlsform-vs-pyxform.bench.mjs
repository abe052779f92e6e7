// A 10,000-question XLSForm converted by libs/xlsform, in a fresh process each round: wall time
// and peak memory growth (peak RSS minus the RSS once the converter is loaded). When Debian's
// python3 and a pyxform source tree are present (PYXFORM_SRC, PYXFORM_PYTHON as for
// `pnpm xlsform:compare`), pyxform converts the same file the same way, rounds interleaved,
// and the ratio of the medians is printed (docs/xlsform.md, "Speed").
//   node bench/xlsform-vs-pyxform.bench.mjs   (after pnpm build)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tablesToXlsx } from '../libs/xlsform/dist/index.js';
import { median, report } from './bench-helpers.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const QUESTIONS = 10_000;

function survey() {
  const rows = [['type', 'name', 'label', 'hint', 'relevant', 'constraint', 'choice_filter']];
  for (let i = 0; rows.length <= QUESTIONS; i++) {
    rows.push(['begin_group', `g${i}`, `Section ${i}`]);
    rows.push(['integer', `age${i}`, 'Age', 'years', '', '. >= 0 and . < 130']);
    rows.push(['select_one region', `region${i}`, 'Region', '', `\${age${i}} > 17`]);
    rows.push(['select_one district', `district${i}`, 'District', '', '', '', `region = \${region${i}}`]);
    rows.push(['text', `note${i}`, 'Comment on ${age' + i + '}']);
    rows.push(['end_group', '']);
  }
  const choices = [['list_name', 'name', 'label', 'region']];
  for (let i = 0; i < 10; i++) choices.push(['region', `r${i}`, `Region ${i}`, '']);
  for (let i = 0; i < 50; i++) choices.push(['district', `d${i}`, `District ${i}`, `r${i % 10}`]);
  return { survey: rows, choices, settings: [['form_id'], ['bench_10k']] };
}

const dir = mkdtempSync(join(tmpdir(), 'xlsform-bench-'));
const file = join(dir, 'form.xlsx');
writeFileSync(file, await tablesToXlsx(survey()));
const lib = new URL('../libs/xlsform/dist/index.js', import.meta.url).href;

const OURS = `
const { readFileSync } = await import('node:fs');
const { convertXlsForm } = await import(${JSON.stringify(lib)});
const data = readFileSync(${JSON.stringify(file)});
const base = process.memoryUsage().rss;
const t = performance.now();
const r = await convertXlsForm(data);
const ms = performance.now() - t;
if (r.xml === null) throw new Error(r.errors.join('; '));
console.log(JSON.stringify({ ms, growthMb: (process.resourceUsage().maxRSS * 1024 - base) / 1048576 }));`;

const src = process.env.PYXFORM_SRC;
const python = process.env.PYXFORM_PYTHON ?? '/usr/bin/python3';
const withPyxform = !!src && existsSync(join(src, 'pyxform', 'xls2xform.py')) && existsSync(python);
const PYX = `
import sys, time, resource
sys.path.insert(0, ${JSON.stringify(src ?? '')})
from pyxform.xls2xform import convert
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
convert(xlsform=${JSON.stringify(file)}, validate=False, pretty_print=False, warnings=[])
ms = (time.perf_counter() - t) * 1000
import json; print(json.dumps({"ms": ms, "growthMb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024}))`;

const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop());
};
const ours = [];
const theirs = [];
for (let i = 0; i < ROUNDS; i++) {
  ours.push(run(process.execPath, ['--input-type=module', '-e', OURS]));
  if (withPyxform) theirs.push(run(python, ['-c', PYX]));
}
const fmt = (xs) => `${(median(xs.map((x) => x.ms)) / 1000).toFixed(2)} s, peak memory growth ${median(xs.map((x) => x.growthMb)).toFixed(0)} MB`;
console.log(`${QUESTIONS}-question XLSForm, median of ${ROUNDS} rounds`);
console.log(`  libs/xlsform: ${fmt(ours)}`);
report(`libs/xlsform peak memory growth, ${QUESTIONS} questions`, median(ours.map((x) => x.growthMb)), { goal: '<= 150', unit: 'MB', digits: 0 });
if (withPyxform) {
  console.log(`  pyxform:      ${fmt(theirs)}`);
  report(`time ours/pyxform, ${QUESTIONS} questions`, median(ours.map((x) => x.ms)) / median(theirs.map((x) => x.ms)), { goal: '<= 0.5' });
} else {
  console.log("  (pyxform not found: set PYXFORM_SRC to compare)");
  report(`libs/xlsform time, ${QUESTIONS} questions`, median(ours.map((x) => x.ms)) / 1000, { unit: 's' });
}
