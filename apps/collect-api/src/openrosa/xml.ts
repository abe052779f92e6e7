import { SaxesParser } from 'saxes';
import { HttpErrorWithHeaders } from '@collect/contracts';

/** A parsed XML element: local name (namespace prefix removed), attributes, children, text. */
export interface XmlNode {
  name: string;
  /** Qualified name as written (`h:html`, `orx:meta`). */
  qname: string;
  /** Attributes by qualified name, in an object without prototype (names are data, never keys of Object.prototype). */
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

/**
 * How much one parsed input may hold (INPUT_MAX_NODES, INPUT_MAX_DEPTH, FORM_MAX_FIELDS;
 * docs/security.md "Parsers of user input").
 */
export interface InputLimits {
  /** Elements of an XML document, values of a JSON submission or form definition. */
  maxNodes: number;
  /** Nesting of elements or JSON objects/arrays. */
  maxDepth: number;
  /** Questions, groups and repeats of one form. */
  maxFields: number;
}

/** The configuration defaults (docs/configuration.md); services pass their configured values. */
export const DEFAULT_INPUT_LIMITS: InputLimits = { maxNodes: 500_000, maxDepth: 64, maxFields: 10_000 };

export function inputLimitsOf(config: { INPUT_MAX_NODES: number; INPUT_MAX_DEPTH: number; FORM_MAX_FIELDS: number }): InputLimits {
  return { maxNodes: config.INPUT_MAX_NODES, maxDepth: config.INPUT_MAX_DEPTH, maxFields: config.FORM_MAX_FIELDS };
}

/** 413 `{"detail"}`: an input over a count limit, refused as soon as the limit is passed. */
export function inputTooLarge(what: string, max: number, variable: 'INPUT_MAX_NODES' | 'FORM_MAX_FIELDS'): HttpErrorWithHeaders {
  const unit = variable === 'FORM_MAX_FIELDS' ? 'fields' : 'elements or values';
  return new HttpErrorWithHeaders(413, `The ${what} has more than ${max} ${unit} (${variable}).`, {});
}

const XML_SPECIAL = /[&<>"]/;
const XML_SPECIAL_ALL = /[&<>"]/g;
const XML_ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };

/** One pass, and none for the usual answer without a special character (intake renders every answer). */
export function escapeXml(s: string): string {
  return XML_SPECIAL.test(s) ? s.replace(XML_SPECIAL_ALL, (c) => XML_ENTITY[c]!) : s;
}

/** Characters XML 1.0 forbids (§2.2); NUL among them cannot be stored by PostgreSQL either. */
const ILLEGAL_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

interface Building {
  node: XmlNode;
  text: string[];
}

/**
 * Parses untrusted XML in one pass with saxes (a strict, streaming parser): refuses any DOCTYPE
 * (so no external or recursive entities can exist; saxes expands only the five predefined
 * entities and character references), stops at the first well-formedness error, and counts as it
 * goes: more than `maxNodes` elements is a 413, deeper than `maxDepth` a 400, both before
 * the rest is read. Element and attribute names stay data (`constructor`, `__proto__` are valid
 * XML names): the tree is arrays and objects without prototype. Throws XmlInputError (400).
 *
 * Text of an element: its text pieces between child elements, each trimmed, joined.
 */
export function parseXml(xml: string, limits: Pick<InputLimits, 'maxNodes' | 'maxDepth'> = DEFAULT_INPUT_LIMITS): XmlNode {
  // Found by fuzzing: a NUL in an answer reached the jsonb insert and answered 500.
  if (ILLEGAL_XML_CHARS.test(xml)) throw new XmlInputError('Malformed XML: the document contains characters XML does not allow (control characters).');
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) throw new XmlInputError('XML with a DOCTYPE or entity declarations is not accepted.');
  const parser = new SaxesParser({ xmlns: false, position: true });
  const stack: Building[] = [];
  let root: XmlNode | undefined;
  let elements = 0;
  parser.on('error', (err) => {
    throw new XmlInputError(`Malformed XML: ${err.message.replace(/^undefined:/, '')}`);
  });
  parser.on('doctype', () => {
    throw new XmlInputError('XML with a DOCTYPE or entity declarations is not accepted.');
  });
  parser.on('opentag', (tag) => {
    if (++elements > limits.maxNodes) throw inputTooLarge('XML document', limits.maxNodes, 'INPUT_MAX_NODES');
    if (stack.length >= limits.maxDepth) throw new XmlInputError(`Malformed XML: elements are nested more than ${limits.maxDepth} deep (INPUT_MAX_DEPTH).`);
    const colon = tag.name.indexOf(':');
    const node: XmlNode = { name: colon >= 0 ? tag.name.slice(colon + 1) : tag.name, qname: tag.name, attrs: tag.attributes as Record<string, string>, children: [], text: '' };
    const parent = stack[stack.length - 1];
    if (parent) parent.node.children.push(node);
    else root = node;
    stack.push({ node, text: [] });
  });
  const onText = (text: string) => {
    const open = stack[stack.length - 1];
    const trimmed = text.trim();
    if (open && trimmed) open.text.push(trimmed);
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    const done = stack.pop()!;
    done.node.text = done.text.join('');
  });
  parser.write(xml).close();
  if (!root) throw new XmlInputError('Malformed XML: expected exactly one root element.');
  return root;
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
