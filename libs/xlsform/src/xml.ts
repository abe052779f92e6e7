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
export function el(tag: string, attrs: Record<string, string | undefined> = {}, ...children: Array<XmlChild | null | undefined>): XmlElement {
  const node = new XmlElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.attr(k, v);
  return node.append(...children);
}

export function escapeText(text: string): string {
  return text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

export function escapeAttr(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;');
}

function write(node: XmlElement, indent: string, out: string[]): void {
  out.push(indent, '<', node.tag);
  for (const [k, v] of node.attrs) out.push(' ', k, '="', escapeAttr(v), '"');
  const n = node.children.length;
  if (n === 0) {
    out.push('/>\n');
    return;
  }
  out.push('>');
  if (node.children.some((c) => typeof c === 'string')) {
    node.children.forEach((c, i) => {
      if (n > 1 && i === 0 && typeof c === 'string') out.push(' ');
      if (typeof c === 'string') out.push(escapeText(c));
      else writeInline(c, out);
      if (n > 1 && i === n - 1) out.push(' ');
    });
  } else {
    out.push('\n');
    for (const c of node.children) write(c as XmlElement, `${indent}  `, out);
    out.push(indent);
  }
  out.push('</', node.tag, '>\n');
}

function writeInline(node: XmlElement, out: string[]): void {
  out.push('<', node.tag);
  for (const [k, v] of node.attrs) out.push(' ', k, '="', escapeAttr(v), '"');
  if (node.children.length === 0) {
    out.push('/>');
    return;
  }
  out.push('>');
  for (const c of node.children) {
    if (typeof c === 'string') out.push(escapeText(c));
    else writeInline(c, out);
  }
  out.push('</', node.tag, '>');
}

/** The document as pyxform's pretty printer writes it, XML declaration included. */
export function serializeDocument(root: XmlElement): string {
  const out: string[] = ['<?xml version="1.0"?>\n'];
  write(root, '', out);
  return out.join('');
}
