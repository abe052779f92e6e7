// `${name}` references of the form tree as XPath: absolute paths, or relative ones (`../x`,
// `current()/../x`) between questions of the same repeat, and labels' <output/> elements
// (pyxform's insert_xpaths). The first layer of the XForm writer (xform.ts).
import { XlsFormProblem } from '../errors.js';
import { RE_REF } from '../expression.js';
import { descendants, type FormNode, type Survey, xpathOf, xpathRelativeTo } from '../model.js';
import { el, escapeAttr, escapeText, type XmlChild, XmlElement } from '../xml.js';
import { instanceExpressionBounds } from './instance-expression.js';

export const LAST_SAVED = '__last-saved';
export const ENTITIES_NS = 'http://www.opendatakit.org/xforms/entities';
export const RE_INDEXED_REPEAT = /indexed-repeat\([^)]+\)/g;
export const RE_INSTANCE = /instance\([^)]+.+/;
export const RE_BRACKET = /\[([^\]]+)\]/g;
export const RE_PULLDATA = /(pulldata\s*\(\s*)(.*?),/g;
export const RE_SEARCH = /search\(.*?\)/;

export type TextForm = { text: string; context?: FormNode } | string;
export type TranslationEntry = Map<string, TextForm>;

export interface SecondaryInstance {
  name: string;
  src?: string;
  type: string;
  context: string;
  element: XmlElement;
}

export abstract class XFormReferences {
  protected readonly byName = new Map<string, FormNode | null>();
  protected readonly translations = new Map<string, Map<string, TranslationEntry>>();

  constructor(protected readonly survey: Survey) {
    for (const node of descendants(survey.root)) {
      if (node.kind === 'external' || node.kind === 'entity' || node.kind === 'attribute' || node.parent?.kind === 'entity') continue;
      this.byName.set(node.name, this.byName.has(node.name) ? null : node);
    }
  }

  protected elementByName(name: string, ref: string): FormNode {
    const found = this.byName.get(name);
    const intro = `There has been a problem trying to replace ${ref} with the XPath to the survey element named '${name}'.`;
    if (found === undefined) throw new XlsFormProblem(`${intro} There is no survey element named '${name}'.`);
    if (found === null) throw new XlsFormProblem(`${intro} There are multiple survey elements named '${name}'.`);
    return found;
  }

  /** pyxform's _var_repl_function for one match of `${name}` in `text`. */
  protected replaceRef(text: string, start: number, end: number, name: string, lastSaved: boolean, context: FormNode | undefined, useCurrent: boolean, referenceParent: boolean): string {
    const target = this.elementByName(name, text.slice(start, end));
    const targetPath = xpathOf(target);
    if (!lastSaved && context && this.relativeAllowed(text, start, end, name)) {
      let current = useCurrent;
      if (!current && RE_INSTANCE.test(text)) {
        for (const b of text.matchAll(RE_BRACKET)) {
          if (start >= b.index! && end <= b.index! + b[0].length) current = true;
        }
      }
      const lcar = lowestCommonAncestor(context, target, true);
      if (lcar) {
        const [steps, refPath0] = pathRelativeToLcar(target, context, lcar.steps, lcar.node, referenceParent);
        if (steps) {
          const refPath = refPath0.endsWith(name) ? refPath0 : `/${name}`;
          const prefix = current ? ' current()/' : ' ';
          return `${prefix}${Array.from({ length: steps }, () => '..').join('/')}${refPath} `;
        }
      }
    }
    return ` ${lastSaved ? `instance('${LAST_SAVED}')` : ''}${targetPath} `;
  }

  // A reference inside indexed-repeat() stays absolute when it is the repeat-path arguments (pyxform).
  protected relativeAllowed(text: string, start: number, end: number, name: string): boolean {
    if (!text.includes('indexed-repeat(')) return true;
    for (const m of text.matchAll(RE_INDEXED_REPEAT)) {
      const s = m.index!;
      const e = s + m[0].length;
      if (end < s || start > e) continue;
      const args = m[0].slice('indexed-repeat('.length, -1).split(',');
      let idx: number | undefined;
      args.forEach((a, i) => {
        if (a.trim().includes(`\${${name}}`)) idx = i;
      });
      return idx !== undefined && ![0, 1, 3, 5].includes(idx);
    }
    return true;
  }

  insertXpaths(text: string, context: FormNode | undefined, useCurrent = false, referenceParent = false): string {
    if (text.length <= 2 || !text.includes('${')) return text;
    return text.replace(RE_REF, (match, last: string | undefined, name: string, offset: number) =>
      this.replaceRef(text, offset, offset + match.length, name, last !== undefined, context, useCurrent, referenceParent),
    );
  }

  /**
   * Text with `${name}` and `instance(...)` expressions turned into <output value="..."/>
   * elements (labels, hints, itext values). pyxform finds the instance expressions in the
   * XML-escaped text and keeps that escaping in the output's value, so `<` there reads `&lt;`.
   */
  protected outputs(text: string, context: FormNode | undefined): XmlChild[] {
    if (text === '-') return [text];
    const escaped = escapeText(text);
    const bounds = instanceExpressionBounds(escaped);
    if (bounds.length === 0) {
      const parts = this.referenceOutputs(text, text, 0, context);
      return parts.length === 1 ? parts : parts.filter((p) => p !== '');
    }
    // pyxform's intermediate text, with the instance expressions already written as outputs:
    // the references left are resolved against it.
    // `written`: the piece as it stands in that intermediate text.
    const pieces: Array<{ text: string; written: string } | { output: string; written: string }> = [];
    let last = 0;
    for (const [start, end] of bounds) {
      const before = escaped.slice(last, start);
      pieces.push({ text: before, written: before });
      const expr = escaped.slice(start, end);
      const output = expr.replace(RE_REF, (match, ls: string | undefined, name: string, at: number) => this.replaceRef(expr, at, at + match.length, name, ls !== undefined, context, false, false));
      pieces.push({ output, written: `<output value="${escapeAttr(output)}"/>` });
      last = end;
    }
    const rest = escaped.slice(last);
    pieces.push({ text: rest, written: rest });
    const whole = pieces.map((p) => p.written).join('');
    const parts: XmlChild[] = [];
    let offset = 0;
    for (const p of pieces) {
      if ('output' in p) parts.push(el('output', { value: p.output }));
      else parts.push(...this.referenceOutputs(p.text, whole, offset, context).map((c) => (typeof c === 'string' ? unescapeText(c) : c)));
      offset += p.written.length;
    }
    return parts.filter((p) => p !== '');
  }

  /** `${name}` in `text` (found at `offset` of `whole`, which decides relative paths) as <output/> elements. */
  private referenceOutputs(text: string, whole: string, offset: number, context: FormNode | undefined): XmlChild[] {
    if (text.length <= 2 || !text.includes('${')) return [text];
    const parts: XmlChild[] = [];
    let last = 0;
    for (const m of text.matchAll(RE_REF)) {
      const start = m.index!;
      parts.push(text.slice(last, start));
      parts.push(el('output', { value: this.replaceRef(whole, offset + start, offset + start + m[0].length, m[2], m[1] !== undefined, context, false, false) }));
      last = start + m[0].length;
    }
    parts.push(text.slice(last));
    return parts;
  }

}

function unescapeText(text: string): string {
  return text.includes('&') ? text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&') : text;
}

export function itemsetElement(nodeset: string, valueRef: string, labelRef: string): XmlElement {
  return el('itemset', { nodeset }, el('value', { ref: valueRef }), el('label', { ref: labelRef }));
}

export function isSelect(node: FormNode): boolean {
  return node.type === 'select one' || node.type === 'select all that apply' || node.type === 'rank';
}

export function extname(name: string): string {
  const slash = name.lastIndexOf('/');
  const dot = name.lastIndexOf('.');
  return dot > slash + 1 ? name.slice(dot) : '';
}

export function nearestRepeat(node: FormNode): FormNode | undefined {
  for (let p = node.parent; p; p = p.parent) if (p.kind === 'repeat') return p;
  return undefined;
}

/** The nearest ancestor shared by both (a repeat when `repeatOnly`), with its distance from `a`. */
export function lowestCommonAncestor(a: FormNode, b: FormNode, repeatOnly: boolean): { node: FormNode; steps: number } | undefined {
  const bAncestors = new Set<FormNode>();
  for (let p = b.parent; p; p = p.parent) bAncestors.add(p);
  let steps = 1;
  for (let p = a.parent; p; p = p.parent, steps++) {
    const typeOk = repeatOnly ? p.kind === 'repeat' : p.kind === 'repeat' || p.kind === 'group';
    if (typeOk && bAncestors.has(p)) return { node: p, steps };
  }
  return undefined;
}

export function pathRelativeToLcar(target: FormNode, source: FormNode, lcarSteps: number, lcar: FormNode, referenceParent: boolean): [number, string] {
  if (referenceParent) {
    const sourceCar = nearestRepeat(source);
    const targetCar = nearestRepeat(target);
    const lcarNotInRepeat = nearestRepeat(lcar) === undefined;
    if (lcar === targetCar && (lcarNotInRepeat || sourceCar !== lcar) && lcar.parent) {
      return [lcarSteps + 1, xpathRelativeTo(target, lcar.parent)];
    }
  }
  const lca = lowestCommonAncestor(source, target, false);
  if (!lca) return [0, xpathOf(target)];
  return [lca.steps, xpathRelativeTo(target, lca.node)];
}
