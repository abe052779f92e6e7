// Every corpus form is written to a real .xlsx file, converted, and its XForm compared with the
// facts pyxform produces for it (docs/xlsform.md, "Corpus").
import { readFileSync } from 'node:fs';
import { convertXlsForm, tablesToXlsx } from '@collect/xlsform';
import type { CorpusForm } from '../corpus/types.js';
import { xformFacts } from './xform-facts.js';

const corpusUrl = new URL('../corpus/index.mjs', import.meta.url).href;

describe('XLSForm corpus', () => {
  let corpus: CorpusForm[];
  beforeAll(async () => {
    corpus = ((await import(corpusUrl)) as { corpus: CorpusForm[] }).corpus;
  });

  it('holds at least 40 forms with distinct names', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(40);
    expect(new Set(corpus.map((f) => f.name)).size).toBe(corpus.length);
  });

  it('is listed in the coverage table of docs/xlsform.md', () => {
    const docs = readFileSync(new URL('../../../docs/xlsform.md', import.meta.url), 'utf8');
    const table = docs.slice(docs.indexOf('| type / column / setting |'));
    expect(corpus.filter((f) => !new RegExp(`[ ,|]${f.name}[ ,|\\n]`).test(table)).map((f) => f.name)).toEqual([]);
  });

  it('converts every form to the XForm facts pyxform produces', async () => {
    const failures: string[] = [];
    for (const form of corpus) {
      const xlsx = await tablesToXlsx(form.sheets);
      const result = await convertXlsForm(xlsx);
      try {
        expect(result.errors).toEqual([]);
        checkFacts(form, result.xml!, result);
      } catch (err) {
        failures.push(`${form.name}: ${(err as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

function checkFacts(form: CorpusForm, xml: string, result: { formId: string | null; title: string | null; version: string | null; warnings: string[]; attachments: string[]; itemsetsCsv: string | null }): void {
  const e = form.expect;
  const f = xformFacts(xml);
  const root = e.metaRoot ?? '/data';
  expect(result.formId).toBe(e.formId ?? 'data');
  expect(f.title).toBe(e.title ?? e.formId ?? 'data');
  expect(result.title).toBe(f.title);
  if (e.version !== undefined) expect(result.version).toBe(e.version);
  expect(f.rootAttributes).toEqual(e.rootAttributes ?? { id: e.formId ?? 'data' });
  expect(f.instance).toEqual(e.instance);
  expect(f.instanceAttributes).toEqual(e.instanceAttributes ?? []);
  expect(f.modelAttributes).toEqual(e.modelAttributes ?? { 'odk:xforms-version': '1.0.0' });
  expect(f.templates).toEqual(e.templates ?? []);
  for (const [path, value] of Object.entries(e.instanceValues ?? {})) expect([path, f.instanceValues[path]]).toEqual([path, value]);
  expect(f.binds).toEqual({ ...e.binds, [`${root}/meta/instanceID`]: { type: 'string', readonly: 'true()', 'jr:preload': 'uid' } });
  expect(f.modelActions).toEqual(e.modelActions ?? []);
  expect(f.body).toEqual(e.body);
  for (const [ref, label] of Object.entries(e.labels ?? {})) expect([ref, f.labels[ref]]).toEqual([ref, label]);
  for (const [ref, hint] of Object.entries(e.hints ?? {})) expect([ref, f.hints[ref]]).toEqual([ref, hint]);
  for (const [ref, itemset] of Object.entries(e.itemsets ?? {})) expect([ref, f.itemsets[ref]]).toEqual([ref, itemset]);
  expect(f.items).toEqual(e.items ?? {});
  expect(f.instances).toEqual(e.instances);
  for (const [list, labels] of Object.entries(e.choiceLabels ?? {})) expect(f.choiceLabels[list]).toEqual(labels);
  for (const [list, byName] of Object.entries(e.choiceExtra ?? {})) {
    for (const [name, extra] of Object.entries(byName)) expect(f.choiceExtra[list][name]).toEqual(extra);
  }
  if (e.itext) {
    expect(Object.keys(f.itext).sort()).toEqual(Object.keys(e.itext).sort());
    for (const [lang, texts] of Object.entries(e.itext)) {
      for (const [id, forms] of Object.entries(texts)) {
        for (const [form_, value] of Object.entries(forms)) expect([lang, id, form_, f.itext[lang]?.[id]?.[form_]]).toEqual([lang, id, form_, value]);
      }
    }
  } else {
    expect(f.itext).toEqual({});
  }
  if (e.defaultLanguage !== undefined) expect(f.defaultLanguage).toBe(e.defaultLanguage);
  if (e.warnings !== undefined) expect(result.warnings).toEqual(e.warnings);
  if (e.submission !== undefined) expect(f.submission).toEqual(e.submission);
  else expect(f.submission).toBeNull();
  expect(f.bodyClass).toBe(e.bodyClass ?? null);
  expect(result.attachments).toEqual(e.attachments ?? []);
  if (e.itemsetsCsv !== undefined) expect(result.itemsetsCsv).toBe(e.itemsetsCsv);
}
