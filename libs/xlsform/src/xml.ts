// A minimal XML tree that serialises the way pyxform prints its XForms (docs/xlsform.md,
// "Output format"): attributes in insertion order, two-space indentation, elements holding
// text written inline, and mixed content (text + <output/>) padded with one space at each end.

export type XmlChild = XmlElement | string;

export class XmlElement {
  readonly attrs: Array<[string, string]> = [];
  readonly children: XmlChild[] = [];

  constructor(readonly tag: string) {}

  attr(name: string, value: string | undefined | null): this {
    if (value === undefined || value === null) return this;
    const at = this.attrs.findIndex(([k]) => k === name);
    if (at >= 0) this.attrs[at] = [name, value];
    else this.attrs.push([name, value]);
    return this;
  }

  getAttr(name: string): string | undefined {
    return this.attrs.find(([k]) => k === name)?.[1];
  }

  append(...children: Array<XmlChild | null | undefined>): this {
    for (const c of children) if (c !== null && c !== undefined && c !== '') this.children.push(c);
    return this;
  }
}

/** Builds an element: `el('bind', { nodeset: '/data/a', type: 'string' })`. Undefined attributes are left out. */
export function el(tag: string, attrs?: Record<string, string | undefined>, ...children: Array<XmlChild | null | undefined>): XmlElement {
  const node = new XmlElement(tag);
  // A fresh element has no attribute to replace: the keys of an object literal are distinct.
  if (attrs !== undefined) {
    for (const k in attrs) {
      const v = attrs[k];
      if (v !== undefined && v !== null) node.attrs.push([k, v]);
    }
  }
  for (let i = 0; i < children.length; i++) {
    const c = children[i];
    if (c !== null && c !== undefined && c !== '') node.children.push(c);
  }
  return node;
}

const RE_TEXT_SPECIAL = /[&<>]/;
const RE_ATTR_SPECIAL = /[&<>"]/;

export function escapeText(text: string): string {
  if (!RE_TEXT_SPECIAL.test(text)) return text;
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

export function escapeAttr(text: string): string {
  if (!RE_ATTR_SPECIAL.test(text)) return text;
  return escapeText(text).replace(/"/g, '&quot;');
}

// Strings are appended to one accumulator (V8 builds ropes), which is cheaper than joining
// millions of small parts.
class Out {
  text = '';
}

function openTag(node: XmlElement, out: Out): void {
  out.text += `<${node.tag}`;
  for (const [k, v] of node.attrs) out.text += ` ${k}="${escapeAttr(v)}"`;
}

function write(node: XmlElement, indent: string, out: Out): void {
  out.text += indent;
  openTag(node, out);
  const n = node.children.length;
  if (n === 0) {
    out.text += '/>\n';
    return;
  }
  out.text += '>';
  let mixed = false;
  for (let i = 0; i < n && !mixed; i++) mixed = typeof node.children[i] === 'string';
  if (mixed) {
    for (let i = 0; i < n; i++) {
      const c = node.children[i];
      if (n > 1 && i === 0 && typeof c === 'string') out.text += ' ';
      if (typeof c === 'string') out.text += escapeText(c);
      else writeInline(c, out);
      if (n > 1 && i === n - 1) out.text += ' ';
    }
  } else {
    out.text += '\n';
    const inner = `${indent}  `;
    for (const c of node.children) write(c as XmlElement, inner, out);
    out.text += indent;
  }
  out.text += `</${node.tag}>\n`;
}

function writeInline(node: XmlElement, out: Out): void {
  openTag(node, out);
  if (node.children.length === 0) {
    out.text += '/>';
    return;
  }
  out.text += '>';
  for (const c of node.children) {
    if (typeof c === 'string') out.text += escapeText(c);
    else writeInline(c, out);
  }
  out.text += `</${node.tag}>`;
}

/** The document as pyxform's pretty printer writes it, XML declaration included. */
export function serializeDocument(root: XmlElement): string {
  const out = new Out();
  out.text = '<?xml version="1.0"?>\n';
  write(root, '', out);
  return out.text;
}
