// Writes every corpus form as an .xlsx file (plus the files it needs) into a folder, so the
// forms can be opened in a spreadsheet program or converted with pyxform for comparison.
// Usage: pnpm build && node libs/xlsform/corpus/generate.mjs [out-dir]   (default: ./xlsform-corpus)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tablesToXlsx } from '../dist/index.js';
import { corpus } from './index.mjs';

const out = resolve(process.argv[2] ?? 'xlsform-corpus');
mkdirSync(out, { recursive: true });
for (const form of corpus) {
  writeFileSync(join(out, `${form.name}.xlsx`), await tablesToXlsx(form.sheets));
  for (const [file, content] of Object.entries(form.attachments ?? {})) {
    mkdirSync(join(out, `${form.name}-media`), { recursive: true });
    writeFileSync(join(out, `${form.name}-media`, file), content);
  }
}
console.log(`${corpus.length} XLSForms written to ${out}`);
