// Loads the real-world forms of a compare run in ODK Web Forms' engine twice: pyxform's XForm
// and ours, and counts the forms the engine loads from pyxform and not from us (docs/xlsform.md,
// "Parity with pyxform"). Not part of CI, like the compare: it reads the folder `pnpm
// xlsform:compare` wrote (COMPARE_OUT) and needs the build.
//   node tools/pyxform-compare/engine-check.mjs <compare folder>
// Attachments a form names (CSV, XML, GeoJSON lookups) are answered with an empty file of their
// kind, the same for both XForms.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { convertXlsForm } from '../../libs/xlsform/dist/index.js';

const folder = join(process.argv[2] ?? '', 'realworld');
const fromXlsform = createRequire(new URL('../../libs/xlsform/package.json', import.meta.url));
const { JSDOM } = await import(pathToFileURL(fromXlsform.resolve('jsdom')).href);
const { window } = new JSDOM('');
globalThis.__dirname = '/';
for (const k of ['DOMParser', 'XMLSerializer', 'document', 'Node', 'Element', 'Document', 'NodeFilter', 'XPathResult']) globalThis[k] = window[k];
const engine = await import(pathToFileURL(fromXlsform.resolve('@getodk/xforms-engine')).href);

const EMPTY = { csv: 'name,label\n', xml: '<root/>', geojson: '{"type":"FeatureCollection","features":[]}' };
const fetchFormAttachment = async (url) => {
  const ext = url.href.slice(url.href.lastIndexOf('.') + 1).toLowerCase();
  const body = EMPTY[ext] ?? '';
  return { ok: true, status: 200, text: async () => body, blob: async () => new Blob([body]) };
};
const loads = async (xml) => {
  try {
    const form = await engine.loadForm(xml, { fetchFormAttachment });
    if (form.status !== 'success') return `load status ${form.status}: ${form.error?.message ?? ''}`;
    form.createInstance();
    return null;
  } catch (err) {
    return String(err?.message ?? err).slice(0, 200);
  }
};

const tally = { forms: 0, both: 0, neither: 0, onlyPyxform: 0, onlyOurs: 0, pyxformRefused: 0 };
const onlyPyxform = [];
const neither = [];
for (const name of readdirSync(folder).filter((f) => f.endsWith('.xlsx')).sort()) {
  const base = name.slice(0, -'.xlsx'.length);
  const theirs = JSON.parse(readFileSync(join(folder, `${base}.pyxform.json`), 'utf8'));
  tally.forms++;
  if (!theirs.ok) {
    tally.pyxformRefused++;
    continue;
  }
  const ours = await convertXlsForm(readFileSync(join(folder, name)), { fallbackFormName: base });
  const [a, b] = [await loads(theirs.xml), ours.xml ? await loads(ours.xml) : 'not converted'];
  if (!a && !b) tally.both++;
  else if (a && b) {
    tally.neither++;
    neither.push(`${base}: ${a}`);
  }
  else if (!a) {
    tally.onlyPyxform++;
    onlyPyxform.push(`${base}: ${b}`);
  } else tally.onlyOurs++;
}
console.log(JSON.stringify(tally));
for (const line of onlyPyxform) console.log(`  the engine loads pyxform's, not ours: ${line}`);
for (const line of neither) console.log(`  the engine loads neither: ${line}`);
process.exitCode = tally.onlyPyxform ? 1 : 0;
