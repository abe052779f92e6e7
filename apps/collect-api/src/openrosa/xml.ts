import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** A parsed XML element: local name (namespace prefix removed), attributes, children, text. */
export interface XmlNode {
  name: string;
  /** Qualified name as written (`h:html`, `orx:meta`). */
  qname: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  text: string;
}

export class XmlInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'XmlInputError';
  }
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  // Entities are never expanded by the parser (no XXE, no billion laughs); the five predefined
  // ones and character references are decoded below, after DTDs were refused.
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  commentPropName: false,
});

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function decodeXmlText(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);/g, (all, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
    }
    return PREDEFINED[ref] ?? all;
  });
}

const XML_SPECIAL = /[&<>"]/;
const XML_SPECIAL_ALL = /[&<>"]/g;
const XML_ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

/** One pass, and none for the usual answer without a special character (intake renders every answer). */
export function escapeXml(s: string): string {
  return XML_SPECIAL.test(s) ? s.replace(XML_SPECIAL_ALL, (c) => XML_ENTITY[c]!) : s;
}

/**
 * Parses untrusted XML. Refuses any DOCTYPE (so no external or recursive entities can exist),
 * then checks well-formedness, then builds the element tree. Throws XmlInputError.
 */
/** Characters XML 1.0 forbids (§2.2); NUL among them cannot be stored by PostgreSQL either. */
const ILLEGAL_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

export function parseXml(xml: string): XmlNode {
  // Found by fuzzing: a NUL in an answer reached the jsonb insert and answered 500.
  if (ILLEGAL_XML_CHARS.test(xml)) throw new XmlInputError('Malformed XML: the document contains characters XML does not allow (control characters).');
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) throw new XmlInputError('XML with a DOCTYPE or entity declarations is not accepted.');
  const valid = XMLValidator.validate(xml, { allowBooleanAttributes: false });
  if (valid !== true) throw new XmlInputError(`Malformed XML: ${valid.err.msg} (line ${valid.err.line})`);
  let ordered: unknown[];
  try {
    ordered = parser.parse(xml) as unknown[];
  } catch (err) {
    throw new XmlInputError(`Malformed XML: ${(err as Error).message}`);
  }
  const roots = toNodes(ordered);
  if (roots.length !== 1) throw new XmlInputError('Malformed XML: expected exactly one root element.');
  return roots[0];
}

function toNodes(items: unknown[]): XmlNode[] {
  const out: XmlNode[] = [];
  for (const item of items) {
    const obj = item as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      if (key === ':@' || key === '#text') continue;
      const children = Array.isArray(obj[key]) ? (obj[key] as unknown[]) : [];
      const attrsRaw = (obj[':@'] ?? {}) as Record<string, unknown>;
      const attrs: Record<string, string> = {};
      for (const [k, v] of Object.entries(attrsRaw)) attrs[k] = decodeXmlText(String(v));
      const text = children
        .map((c) => (c as Record<string, unknown>)['#text'])
        .filter((t) => t !== undefined)
        .map((t) => decodeXmlText(String(t)))
        .join('');
      out.push({ name: key.includes(':') ? key.slice(key.indexOf(':') + 1) : key, qname: key, attrs, children: toNodes(children), text });
    }
  }
  return out;
}

export function child(node: XmlNode | undefined, name: string): XmlNode | undefined {
  return node?.children.find((c) => c.name === name);
}

export function childrenNamed(node: XmlNode | undefined, name: string): XmlNode[] {
  return node?.children.filter((c) => c.name === name) ?? [];
}

/** Attribute by local name (`jr:template` → `template`). */
export function attr(node: XmlNode, local: string): string | undefined {
  for (const [k, v] of Object.entries(node.attrs)) if (k === local || k.endsWith(`:${local}`)) return v;
  return undefined;
}
