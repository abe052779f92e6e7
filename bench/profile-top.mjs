// Top self-time functions of a V8 CPU profile (`node --cpu-prof`; a bench writes them under
// BENCH_CPU_PROF=<dir>, see docs/benchmarks.md):
//
//   node bench/profile-top.mjs <file.cpuprofile> [--window <name>] [--top <n>] [--callers <function>]
//
// Self time of a sample = the time until the next sample. Functions are aggregated by name, file
// and line over every call path; a second table sums self time by package (node_modules
// package, node internals, this repository's app or lib, V8's own entries such as the garbage
// collector). `--window <name>` keeps only samples taken while the bench ran that part: the
// windows are read from `<dir>/<bench>.windows.json` beside `<bench>.<role>.cpuprofile`, whose
// microsecond timestamps share the profile's clock (CLOCK_MONOTONIC). `--callers <function>`
// adds which call paths the self time of that function (e.g. the native `writev`) comes from:
// the first caller frames outside node internals, aggregated like the functions (percentages
// of all the time sampled, as in the other tables).
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { window: { type: 'string' }, top: { type: 'string', default: '20' }, callers: { type: 'string' } } });
if (positionals.length !== 1) {
  console.error('usage: node bench/profile-top.mjs <file.cpuprofile> [--window <name>] [--top <n>] [--callers <function>]');
  process.exit(2);
}
const file = positionals[0];
const top = Number(values.top);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const repo = fileURLToPath(new URL('..', import.meta.url));

let windows = null;
if (values.window) {
  const windowsFile = join(dirname(file), `${basename(file).split('.')[0]}.windows.json`);
  if (!existsSync(windowsFile)) throw new Error(`--window needs ${windowsFile} (written by the bench under BENCH_CPU_PROF)`);
  const all = JSON.parse(readFileSync(windowsFile, 'utf8'));
  windows = all[values.window];
  if (!windows) throw new Error(`no window "${values.window}" in ${windowsFile}; there are: ${Object.keys(all).join(', ')}`);
}

const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map(); // node id -> µs
let total = 0;
let t = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  t += profile.timeDeltas[i];
  const dt = profile.timeDeltas[i + 1] ?? 0;
  if (windows && !windows.some(([from, to]) => t >= from && t < to)) continue;
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
  total += dt;
}
if (total === 0) throw new Error('no samples in the chosen window');

const where = (url) => {
  if (!url) return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  // pnpm's store path (node_modules/.pnpm/<name>@<version>_<peers>/node_modules/<name>) shortened to node_modules/<name>.
  return (path.startsWith(repo) ? relative(repo, path) : path).replace(/node_modules\/\.pnpm\/[^/]+\/node_modules\//, 'node_modules/');
};
const packageOf = (frame) => {
  const url = frame.url;
  if (!url) return frame.functionName.startsWith('(') ? frame.functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const path = where(url);
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(path);
  if (pkg) return pkg[1];
  const own = /^(apps|libs|bench)\/([^/]+)/.exec(path);
  return own ? `${own[1]}/${own[2]}` : path;
};

const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const keyOf = (frame) => `${frame.functionName || '(anonymous)'}${frame.url ? `  ${where(frame.url)}:${frame.lineNumber + 1}` : ''}`;

const byFunction = new Map();
const byPackage = new Map();
const byCaller = new Map();
for (const [id, us] of self) {
  const frame = nodes.get(id).callFrame;
  byFunction.set(keyOf(frame), (byFunction.get(keyOf(frame)) ?? 0) + us);
  const pkg = packageOf(frame);
  byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  if (values.callers && frame.functionName === values.callers) {
    let up = parent.get(id);
    while (up !== undefined && (!nodes.get(up).callFrame.url || nodes.get(up).callFrame.url.startsWith('node:'))) up = parent.get(up);
    const key = up === undefined ? '(no caller outside node internals)' : keyOf(nodes.get(up).callFrame);
    byCaller.set(key, (byCaller.get(key) ?? 0) + us);
  }
}
const print = (title, map, n) => {
  console.log(title);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) {
    console.log(`${(us / 1000).toFixed(0).padStart(8)} ms ${((100 * us) / total).toFixed(1).padStart(5)} %  ${key}`);
  }
};
console.log(`${file}${windows ? ` window "${values.window}" (${windows.length} parts)` : ''}: ${(total / 1000).toFixed(0)} ms sampled`);
print(`top ${top} functions by self time:`, byFunction, top);
print('self time by package:', byPackage, 12);
if (values.callers) print(`self time of ${values.callers} by caller:`, byCaller, top);
