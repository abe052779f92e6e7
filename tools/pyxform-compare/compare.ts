// Converts the cases collect.py wrote with libs/xlsform and compares each XForm with pyxform's:
// instance paths, binds and model actions, body controls, itext and secondary instances
// (docs/xlsform.md, "Parity with pyxform"). Prints, per set, how many agree, are accepted by us
// but refused by pyxform (accepted-bad), refused by us but converted by pyxform (refused-good),
// differ, or crash our converter. Run by `pnpm xlsform:compare` after `pnpm build`.
// Usage: node tools/pyxform-compare/compare.ts CASES_DIR [--details N] [--json FILE] [--only REGEX]
// (--only keeps the cases whose `set/name` matches, for a quick run over one cluster.)
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { convertXlsForm, type ConversionResult } from '../../libs/xlsform/dist/index.js';
import { xformFacts, type XFormFacts } from '../../libs/xlsform/test/xform-facts.ts';

type Outcome = 'agree' | 'accepted-bad' | 'refused-good' | 'different' | 'crash';
interface CaseResult { set: string; name: string; outcome: Outcome; detail: string }

const COMPARED: Array<keyof XFormFacts> = ['instance', 'rootAttributes', 'instanceAttributes', 'modelAttributes', 'submission', 'templates', 'binds', 'modelActions', 'body', 'labels', 'hints', 'itext', 'instances'];

function stable(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stable).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${stable((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The first difference of one fact, as a short text. */
function firstDifference(key: keyof XFormFacts, ours: unknown, theirs: unknown): string {
  if (ours && theirs && typeof ours === 'object' && typeof theirs === 'object' && !Array.isArray(ours)) {
    const o = ours as Record<string, unknown>;
    const t = theirs as Record<string, unknown>;
    for (const k of new Set([...Object.keys(t), ...Object.keys(o)])) {
      if (stable(o[k]) !== stable(t[k])) return `${key} ${k}: ours ${stable(o[k]) ?? '-'} pyxform ${stable(t[k]) ?? '-'}`;
    }
  }
  if (Array.isArray(ours) && Array.isArray(theirs)) {
    const missing = theirs.filter((x) => !ours.includes(x)).slice(0, 2);
    const extra = ours.filter((x) => !theirs.includes(x)).slice(0, 2);
    return `${key}: missing ${stable(missing)} extra ${stable(extra)}`;
  }
  return `${key}: ours ${stable(ours)} pyxform ${stable(theirs)}`;
}

function convertInChild(file: string, name: string): ConversionResult {
  const child = spawnSync(process.execPath, ['--max-old-space-size=512', new URL('./convert-one.mjs', import.meta.url).pathname, file, name], {
    timeout: 120_000, maxBuffer: 256 * 1024 * 1024, encoding: 'utf8',
  });
  if (child.status !== 0) throw new Error(`converter exited ${child.status ?? child.signal}: ${child.stderr.split('\n').find((l) => /error/i.test(l)) ?? ''}`);
  return JSON.parse(child.stdout) as ConversionResult;
}

function wellFormed(xml: string): boolean {
  try {
    xformFacts(xml);
    return true;
  } catch {
    return false;
  }
}

async function compareCase(dir: string, set: string, name: string): Promise<CaseResult> {
  const theirs = JSON.parse(readFileSync(join(dir, `${name}.pyxform.json`), 'utf8')) as { ok: boolean; xml?: string; error?: string };
  let ours;
  try {
    const file = join(dir, `${name}.xlsx`);
    // Real-world workbooks convert in a child process with a heap limit and a deadline, so one
    // that stalls or floods ours counts as a crash; the small test forms in this process.
    ours = set === 'realworld' ? convertInChild(file, name) : await convertXlsForm(readFileSync(file), { fallbackFormName: name });
  } catch (err) {
    return { set, name, outcome: 'crash', detail: String((err as Error).stack ?? err).split('\n').slice(0, 3).join(' | ') };
  }
  if (ours.xml === null && ours.errors.length === 0) return { set, name, outcome: 'crash', detail: 'refused without a message' };
  // An XForm that is not well-formed XML (an attribute prefix no namespace declares) is of no use
  // to any ODK tool: pyxform's is counted as a refusal (docs/xlsform.md, "Parity with pyxform").
  if (theirs.ok && !wellFormed(theirs.xml!)) {
    theirs.ok = false;
    theirs.error = 'pyxform wrote an XForm that is not well-formed XML';
  }
  if (!theirs.ok) {
    if (ours.xml === null) return { set, name, outcome: 'agree', detail: '' };
    return { set, name, outcome: 'accepted-bad', detail: `pyxform: ${theirs.error!.split('\n')[0].slice(0, 200)}` };
  }
  if (ours.xml === null) return { set, name, outcome: 'refused-good', detail: `ours: ${ours.errors[0].slice(0, 200)}` };
  let a: XFormFacts;
  try {
    a = xformFacts(ours.xml);
  } catch (err) {
    return { set, name, outcome: 'crash', detail: `our XForm: ${(err as Error).message.slice(0, 200)}` };
  }
  const b = xformFacts(theirs.xml!);
  for (const key of COMPARED) {
    if (stable(a[key]) !== stable(b[key])) return { set, name, outcome: 'different', detail: firstDifference(key, a[key], b[key]).slice(0, 300) };
  }
  return { set, name, outcome: 'agree', detail: '' };
}

const args = process.argv.slice(2);
const root = args[0];
if (!root) {
  console.error('usage: node tools/pyxform-compare/compare.ts CASES_DIR [--details N] [--json FILE]');
  process.exit(2);
}
const details = args.includes('--details') ? Number(args[args.indexOf('--details') + 1]) : 0;
const only = args.includes('--only') ? new RegExp(args[args.indexOf('--only') + 1]) : undefined;
const results: CaseResult[] = [];
for (const set of readdirSync(root).sort()) {
  const dir = join(root, set);
  const names = readdirSync(dir).filter((f) => f.endsWith('.xlsx')).map((f) => f.slice(0, -5)).sort();
  for (const name of names) {
    if (only && !only.test(`${set}/${name}`)) continue;
    if (process.env.COMPARE_TRACE) console.error(`${set}/${name}`);
    results.push(await compareCase(dir, set, name));
  }
}
const OUTCOMES: Outcome[] = ['agree', 'accepted-bad', 'refused-good', 'different', 'crash'];
console.log(`| set | forms | ${OUTCOMES.join(' | ')} |`);
console.log(`|---|---:|${OUTCOMES.map(() => '---:').join('|')}|`);
for (const set of [...new Set(results.map((r) => r.set))]) {
  const rs = results.filter((r) => r.set === set);
  console.log(`| ${set} | ${rs.length} | ${OUTCOMES.map((o) => rs.filter((r) => r.outcome === o).length).join(' | ')} |`);
}
if (details) {
  for (const o of OUTCOMES.slice(1)) {
    const rs = results.filter((r) => r.outcome === o);
    if (rs.length === 0) continue;
    console.log(`\n${o} (${rs.length}):`);
    for (const r of rs.slice(0, details)) console.log(`  ${r.set}/${r.name}: ${r.detail}`);
  }
}
if (args.includes('--json')) writeFileSync(args[args.indexOf('--json') + 1], JSON.stringify(results, null, 1));
