// Reads an XForm with a real XML parser (jsdom) and lists the facts the corpus states:
// instance paths, binds, body controls, labels, itemsets, itext, secondary instances.
import { JSDOM } from 'jsdom';

const { DOMParser } = new JSDOM('').window;

const CONTROL_TAGS = new Set(['input', 'select1', 'select', 'odk:rank', 'upload', 'trigger', 'range', 'group', 'repeat', 'setvalue', 'odk:setgeopoint']);

export interface XFormFacts {
  title: string;
  rootAttributes: Record<string, string>;
  instance: string[];
  /** Attributes of primary-instance elements below the root (e.g. meta/entity's), `path@name=value`. */
  instanceAttributes: string[];
  /** Attributes of the model element (`odk:xforms-version`, `entities:entities-version`). */
  modelAttributes: Record<string, string>;
  templates: string[];
  instanceValues: Record<string, string>;
  binds: Record<string, Record<string, string>>;
  modelActions: string[];
  body: string[];
  bodyClass: string | null;
  labels: Record<string, string>;
  hints: Record<string, string>;
  itemsets: Record<string, string>;
  items: Record<string, Array<[string, string]>>;
  itext: Record<string, Record<string, Record<string, string>>>;
  defaultLanguage: string | null;
  instances: Record<string, string | string[]>;
  choiceLabels: Record<string, string[]>;
  choiceExtra: Record<string, Record<string, Record<string, string>>>;
  submission: Record<string, string> | null;
}

const elements = (node: Element): Element[] => Array.from(node.children);

function attrs(node: Element, skip: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of Array.from(node.attributes)) if (!skip.includes(a.name)) out[a.name] = a.value;
  return out;
}

function canonical(node: Element, key: string): string {
  const rest = Object.entries(attrs(node, [key]))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => ` ${k}=${v}`)
    .join('');
  return `${node.tagName} ${node.getAttribute(key)}${rest}`;
}

/** Text and <output/> children as written, trimmed: `Hi <output value=" /data/x "/>`. */
function inner(node: Element): string {
  let out = '';
  for (const c of Array.from(node.childNodes)) {
    if (c.nodeType === 3) out += c.nodeValue;
    else if (c.nodeType === 1) {
      const e = c as Element;
      out += `<${e.tagName}${Array.from(e.attributes).map((a) => ` ${a.name}="${a.value}"`).join('')}/>`;
    }
  }
  return out.trim();
}

function labelText(node: Element | undefined): string | undefined {
  if (!node) return undefined;
  const ref = node.getAttribute('ref');
  if (ref) return `itext:${ref.replace(/^jr:itext\('(.*)'\)$/, '$1')}`;
  return inner(node);
}

export function xformFacts(xml: string): XFormFacts {
  const doc = new DOMParser().parseFromString(xml, 'application/xml');
  const err = doc.getElementsByTagName('parsererror')[0];
  if (err) throw new Error(`not well-formed XML: ${err.textContent}`);
  const html = doc.documentElement;
  const head = elements(html).find((e) => e.tagName === 'h:head')!;
  const body = elements(html).find((e) => e.tagName === 'h:body')!;
  const model = elements(head).find((e) => e.tagName === 'model')!;
  const facts: XFormFacts = {
    title: elements(head).find((e) => e.tagName === 'h:title')!.textContent ?? '',
    rootAttributes: {},
    instance: [],
    instanceAttributes: [],
    modelAttributes: attrs(model),
    templates: [],
    instanceValues: {},
    binds: {},
    modelActions: [],
    body: [],
    bodyClass: body.getAttribute('class'),
    labels: {},
    hints: {},
    itemsets: {},
    items: {},
    itext: {},
    defaultLanguage: null,
    instances: {},
    choiceLabels: {},
    choiceExtra: {},
    submission: null,
  };
  for (const child of elements(model)) {
    if (child.tagName === 'instance' && !child.hasAttribute('id')) {
      const root = elements(child)[0];
      facts.rootAttributes = attrs(root);
      const seen = new Set<string>();
      const walk = (e: Element, path: string, inTemplate: boolean) => {
        const template = inTemplate || e.hasAttribute('jr:template');
        if (e.hasAttribute('jr:template')) facts.templates.push(path);
        if (!seen.has(path)) {
          seen.add(path);
          facts.instance.push(path);
          if (e !== root) for (const [k, v] of Object.entries(attrs(e, ['jr:template']))) facts.instanceAttributes.push(`${path}@${k}=${v}`);
        }
        if (!template && elements(e).length === 0 && !(path in facts.instanceValues)) facts.instanceValues[path] = e.textContent ?? '';
        for (const c of elements(e)) walk(c, `${path}/${c.tagName}`, template);
      };
      walk(root, `/${root.tagName}`, false);
    } else if (child.tagName === 'instance') {
      const id = child.getAttribute('id')!;
      const src = child.getAttribute('src');
      if (src) facts.instances[id] = src;
      else {
        const items = elements(elements(child)[0]);
        facts.instances[id] = items.map((i) => elements(i).find((e) => e.tagName === 'name')?.textContent ?? '');
        facts.choiceLabels[id] = items.map((i) => elements(i).find((e) => e.tagName === 'label')?.textContent ?? '');
        facts.choiceExtra[id] = {};
        for (const i of items) {
          const name = elements(i).find((e) => e.tagName === 'name')?.textContent ?? '';
          facts.choiceExtra[id][name] = Object.fromEntries(
            elements(i).filter((e) => !['name', 'label', 'itextId'].includes(e.tagName)).map((e) => [e.tagName, e.textContent ?? '']),
          );
        }
      }
    } else if (child.tagName === 'bind') {
      facts.binds[child.getAttribute('nodeset')!] = attrs(child, ['nodeset']);
    } else if (child.tagName === 'itext') {
      for (const tr of elements(child)) {
        const lang = tr.getAttribute('lang')!;
        if (tr.getAttribute('default') === 'true()') facts.defaultLanguage = lang;
        facts.itext[lang] = {};
        for (const text of elements(tr)) {
          const forms: Record<string, string> = {};
          for (const v of elements(text)) forms[v.getAttribute('form') ?? 'long'] = inner(v);
          facts.itext[lang][text.getAttribute('id')!] = forms;
        }
      }
    } else if (child.tagName === 'submission') {
      facts.submission = attrs(child);
    } else {
      facts.modelActions.push(canonical(child, 'ref'));
    }
  }
  const walkBody = (e: Element) => {
    for (const c of elements(e)) {
      if (!CONTROL_TAGS.has(c.tagName)) continue;
      const key = c.tagName === 'repeat' ? 'nodeset' : 'ref';
      facts.body.push(canonical(c, key));
      const ref = c.getAttribute(key)!;
      const kids = elements(c);
      const label = kids.find((k) => k.tagName === 'label');
      if (label && c.tagName !== 'repeat') facts.labels[ref] = labelText(label)!;
      const hint = kids.find((k) => k.tagName === 'hint');
      if (hint) facts.hints[ref] = labelText(hint)!;
      const itemset = kids.find((k) => k.tagName === 'itemset');
      if (itemset) {
        const v = elements(itemset).find((k) => k.tagName === 'value')?.getAttribute('ref');
        const l = elements(itemset).find((k) => k.tagName === 'label')?.getAttribute('ref');
        facts.itemsets[ref] = `${itemset.getAttribute('nodeset')}|${v}|${l}`;
      }
      const items = kids.filter((k) => k.tagName === 'item');
      if (items.length > 0) {
        facts.items[ref] = items.map((i) => [
          elements(i).find((k) => k.tagName === 'value')?.textContent ?? '',
          labelText(elements(i).find((k) => k.tagName === 'label')) ?? '',
        ]);
      }
      walkBody(c);
    }
  };
  walkBody(body);
  return facts;
}
