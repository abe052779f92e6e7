import { escapeXml } from './xml.js';

/**
 * Small edits of a stored XForm, made on its text so everything else stays byte for byte as
 * uploaded (docs/forms.md, "Form versions" and "formhub/uuid"): the primary instance root's
 * `version` attribute, and `<formhub><uuid/></formhub>` with a bind that calculates the form's
 * uuid. The document was parsed (and refused if malformed, with a DOCTYPE or entities) before
 * any of this runs; the tag scanner skips comments, CDATA and processing instructions, one pass.
 */

export interface Tag {
  kind: 'open' | 'close' | 'empty';
  /** Local name (prefix removed). */
  name: string;
  start: number;
  /** Index just after the closing `>`. */
  end: number;
  /** The text between the name and the closing `>` (or `/>`). */
  attrs: string;
  depth: number;
}

export function* tags(xml: string): Generator<Tag> {
  let depth = 0;
  let i = xml.indexOf('<');
  while (i !== -1 && i < xml.length) {
    if (xml.startsWith('<!--', i)) i = after(xml, '-->', i);
    else if (xml.startsWith('<![CDATA[', i)) i = after(xml, ']]>', i);
    else if (xml.startsWith('<?', i) || xml.startsWith('<!', i)) i = after(xml, '>', i);
    else {
      let j = i + 1;
      let quote = '';
      while (j < xml.length && (quote || xml[j] !== '>')) {
        if (quote) {
          if (xml[j] === quote) quote = '';
        } else if (xml[j] === '"' || xml[j] === "'") quote = xml[j];
        j++;
      }
      const inner = xml.slice(i + 1, j);
      const closing = inner.startsWith('/');
      const selfClosing = !closing && inner.endsWith('/');
      const body = closing ? inner.slice(1) : selfClosing ? inner.slice(0, -1) : inner;
      const qname = /^[^\s/>]+/.exec(body)?.[0] ?? '';
      const name = qname.includes(':') ? qname.slice(qname.indexOf(':') + 1) : qname;
      if (closing) depth--;
      yield { kind: closing ? 'close' : selfClosing ? 'empty' : 'open', name, start: i, end: j + 1, attrs: body.slice(qname.length), depth };
      if (!closing && !selfClosing) depth++;
      i = j + 1;
    }
    i = xml.indexOf('<', i);
  }
}

function after(xml: string, end: string, from: number): number {
  const at = xml.indexOf(end, from);
  return at === -1 ? xml.length : at + end.length;
}

function attrValue(attrs: string, local: string): string | undefined {
  const m = new RegExp(`(?:^|\\s)(?:[A-Za-z_][\\w.-]*:)?${local}\\s*=\\s*("([^"]*)"|'([^']*)')`).exec(attrs);
  return m ? (m[2] ?? m[3]) : undefined;
}

/** Where the primary instance lives: the root's start tag, the tags inside the root, and the end of the model. */
interface Anatomy {
  root: Tag;
  /** Tags inside the root element, in order (the root's own end tag excluded). */
  inside: Tag[];
  /** The `</model>` tag. */
  modelEnd: Tag;
  /** Every `<bind>` of the model. */
  binds: Tag[];
}

function anatomy(xml: string): Anatomy | null {
  const path: string[] = [];
  let root: Tag | null = null;
  let inside: Tag[] | null = null;
  let primaryDone = false;
  let inPrimary = false;
  const binds: Tag[] = [];
  for (const tag of tags(xml)) {
    if (tag.kind === 'close') {
      path.pop();
      if (inPrimary && root && tag.depth === root.depth) {
        inPrimary = false;
        primaryDone = true;
      } else if (inPrimary) inside!.push(tag);
      if (tag.name === 'model' && path.length === 2 && root) return { root, inside: inside!, modelEnd: tag, binds };
      continue;
    }
    const parent = path.join('/');
    if (inPrimary) inside!.push(tag);
    else if (!primaryDone && parent === 'html/head/model/instance' && path.length === 4 && !root) {
      root = tag;
      if (tag.kind === 'open') {
        inPrimary = true;
        inside = [];
      } else inside = [];
    }
    if (tag.name === 'bind' && parent === 'html/head/model') binds.push(tag);
    if (tag.kind === 'open') {
      // A secondary instance (with an id) is not the primary one: look past it.
      if (tag.name === 'instance' && parent === 'html/head/model' && attrValue(tag.attrs, 'id') !== undefined) path.push('secondary-instance');
      else path.push(tag.name);
    }
  }
  return null;
}

export class XFormEditError extends Error {}

/** The primary instance root with `version="<version>"` (replaced or added). */
export function setInstanceVersion(xml: string, version: string): string {
  const a = anatomy(xml);
  if (!a) throw new XFormEditError('No primary instance found in the XForm.');
  const { root } = a;
  const value = `version="${escapeXml(version)}"`;
  const re = /(\s)version\s*=\s*("[^"]*"|'[^']*')/;
  const attrs = re.test(root.attrs) ? root.attrs.replace(re, `$1${value}`) : ` ${value}${root.attrs}`;
  const qname = xml.slice(root.start + 1, root.start + 1 + (/^[^\s/>]+/.exec(xml.slice(root.start + 1))?.[0].length ?? 0));
  return `${xml.slice(0, root.start)}<${qname}${attrs}${root.kind === 'empty' ? '/>' : '>'}${xml.slice(root.end)}`;
}

/**
 * `<formhub><uuid/></formhub>` in the primary instance and a bind calculating `'<uuidHex>'`
 * on it, as the Django implementation publishes every form: ODK clients then send the form's
 * uuid with each submission, and intake routes by it exactly. An existing formhub/uuid keeps
 * its place; its bind's calculate is set to this form's uuid (a copy of another server's form
 * must not carry that form's uuid).
 */
export function withFormhubUuid(xml: string, rootName: string, uuidHex: string): string {
  const a = anatomy(xml);
  if (!a) throw new XFormEditError('No primary instance found in the XForm.');
  const edits: Array<{ at: number; to: number; text: string }> = [];
  const childDepth = a.root.depth + 1;
  const formhub = a.inside.find((t) => t.depth === childDepth && t.name === 'formhub' && t.kind !== 'close');
  if (!formhub) edits.push({ at: a.root.end, to: a.root.end, text: '<formhub><uuid/></formhub>' });
  else {
    const uuid = a.inside.find((t) => t.depth === childDepth + 1 && t.name === 'uuid' && t.kind !== 'close' && t.start > formhub.start && isWithin(a.inside, formhub, t));
    if (!uuid) {
      if (formhub.kind === 'empty') edits.push({ at: formhub.start, to: formhub.end, text: '<formhub><uuid/></formhub>' });
      else edits.push({ at: formhub.end, to: formhub.end, text: '<uuid/>' });
    }
  }
  const nodeset = `/${rootName}/formhub/uuid`;
  const bindText = `<bind nodeset="${nodeset}" type="string" calculate="'${uuidHex}'"/>`;
  const bind = a.binds.find((b) => attrValue(b.attrs, 'nodeset') === nodeset);
  if (!bind) edits.push({ at: a.modelEnd.start, to: a.modelEnd.start, text: bindText });
  else if (bind.kind === 'empty') edits.push({ at: bind.start, to: bind.end, text: bindText });
  else {
    // <bind ...></bind>: replace the start tag, keep its (empty) end tag.
    edits.push({ at: bind.start, to: bind.end, text: bindText.replace('/>', '>') });
  }
  let out = xml;
  for (const e of edits.sort((x, y) => y.at - x.at)) out = out.slice(0, e.at) + e.text + out.slice(e.to);
  return out;
}

/** Whether `t` lies inside the element that `open` starts (before its end tag). */
function isWithin(inside: Tag[], open: Tag, t: Tag): boolean {
  if (open.kind === 'empty') return false;
  const end = inside.find((x) => x.kind === 'close' && x.depth === open.depth && x.start > open.start);
  return !end || t.start < end.start;
}
