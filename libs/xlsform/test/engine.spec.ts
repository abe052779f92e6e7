// Every corpus form, converted from a real .xlsx, is loaded by ODK Web Forms' engine
// (@getodk/xforms-engine), which then fills in the corpus answers and serializes the
// submission XML an ODK client would post (docs/xlsform.md, "Engine check").
//
// The engine is written for browsers: it needs a DOM (jsdom provides DOMParser/document here,
// as the engine's own test suite does) and its bundled tree-sitter WASM loader reads
// `__dirname` when it sees Node.
import { convertXlsForm, tablesToXlsx } from '@collect/xlsform';
import { JSDOM } from 'jsdom';
import type { CorpusForm } from '../corpus/types.js';

const corpusUrl = new URL('../corpus/index.mjs', import.meta.url).href;

interface EngineNode {
  nodeType: string;
  currentState: { reference: string; children?: EngineNode[] | null; relevant?: boolean; valueOptions?: Array<{ value: string }> };
  setValue?: (v: unknown) => unknown;
  selectValue?: (v: string) => unknown;
  selectValues?: (v: string[]) => unknown;
}

function installDom(): void {
  const { window } = new JSDOM('');
  const g = globalThis as Record<string, unknown>;
  g.__dirname = '/';
  for (const k of ['DOMParser', 'XMLSerializer', 'document', 'Node', 'Element', 'Document', 'NodeFilter', 'XPathResult']) {
    g[k] = (window as unknown as Record<string, unknown>)[k];
  }
}

function findNode(root: EngineNode, ref: string): EngineNode | undefined {
  if (root.currentState.reference === ref) return root;
  for (const c of root.currentState.children ?? []) {
    const found = findNode(c, ref);
    if (found) return found;
  }
  return undefined;
}

function answer(node: EngineNode, value: string | number | boolean | string[]): void {
  if (Array.isArray(value)) node.selectValues!(value);
  else if (node.selectValue) node.selectValue(String(value));
  else node.setValue!(value);
}

describe('ODK Web Forms engine loads every converted corpus form', () => {
  let corpus: CorpusForm[];
  let engine: typeof import('@getodk/xforms-engine');
  const { window } = new JSDOM('');
  const parser = new window.DOMParser();

  beforeAll(async () => {
    installDom();
    engine = await import('@getodk/xforms-engine');
    corpus = ((await import(corpusUrl)) as { corpus: CorpusForm[] }).corpus;
  });

  it('loads each form without errors, fills the answers and serializes a submission', async () => {
    const failures: string[] = [];
    let submissions = 0;
    for (const form of corpus) {
      try {
        const result = await convertXlsForm(await tablesToXlsx(form.sheets));
        expect(result.errors).toEqual([]);
        const attachments = form.attachments ?? {};
        const loaded = await engine.loadForm(result.xml!, {
          fetchFormAttachment: async (url: URL) => {
            const name = url.href.slice(url.href.lastIndexOf('/') + 1);
            const content = attachments[name];
            if (content === undefined) return { ok: false, status: 404, text: async () => '', blob: async () => new Blob([]) };
            return { ok: true, status: 200, text: async () => content, blob: async () => new Blob([content]) };
          },
        });
        if (loaded.status !== 'success') throw new Error(`load status ${loaded.status}: ${loaded.error?.message ?? JSON.stringify(loaded.warnings)}`);
        const instance = loaded.createInstance();
        const root = instance.root as unknown as EngineNode & { prepareInstancePayload(): Promise<{ status: string; data: FormData[] }> };
        for (const [ref, value] of Object.entries(form.answers ?? {})) {
          const node = findNode(root, ref);
          if (!node) throw new Error(`no engine node for ${ref}`);
          answer(node, value);
        }
        const payload = await root.prepareInstancePayload();
        const xml = await (payload.data[0].get('xml_submission_file') as File).text();
        const doc = parser.parseFromString(xml, 'application/xml');
        const metaRoot = form.expect.metaRoot ?? '/data';
        expect(doc.documentElement.tagName).toBe(metaRoot.slice(1));
        expect(doc.documentElement.getAttribute('id')).toBe(result.formId);
        expect(doc.getElementsByTagName('instanceID')[0]?.textContent).toMatch(/^uuid:[0-9a-f-]{36}$/);
        if (form.answers) expect(payload.status).toBe('ready');
        const expected: Record<string, string> = { ...(form.submission ?? {}) };
        for (const [ref, value] of Object.entries(form.answers ?? {})) expected[ref] = Array.isArray(value) ? value.join(' ') : typeof value === 'boolean' ? 'OK' : String(value);
        for (const [ref, value] of Object.entries(expected)) {
          const tag = ref.slice(ref.lastIndexOf('/') + 1);
          const found = Array.from(doc.getElementsByTagName(tag)).map((n) => n.textContent);
          expect([ref, found]).toEqual([ref, expect.arrayContaining([value])]);
        }
        submissions++;
      } catch (err) {
        failures.push(`${form.name}: ${(err as Error).message}`);
      }
    }
    expect(failures).toEqual([]);
    expect(submissions).toBe(corpus.length);
  });
});
