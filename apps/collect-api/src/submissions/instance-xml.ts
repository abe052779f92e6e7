import type { FormEntity, FormField } from '../forms/form.entity.js';
import { escapeXml } from '../openrosa/xml.js';
import { sameKeys } from './submission-canonical.js';
import type { SubmissionRecord } from './submission.entity.js';

/** A form's xpaths with their rank (form order) and their elements' tags. */
interface FormLayout {
  rank: Map<string, number>;
  tags: Map<string, readonly [open: string, close: string]>;
  /** Fields with children (groups, repeats): how many group tags a document may need. */
  groups: number;
  /** Flat documents rendered lately for this form, newest last (FLAT_TEMPLATES_KEPT). */
  templates: FlatTemplate[];
}

/**
 * A flat document of one list of keys (renderFlat), kept with its answers' places: the record's
 * own keys, the extra answers' keys, and `parts` (the document's pieces) whose `slots` hold the
 * escaped answers, `keys[i]` the answer of `slots[i]`, taken from the extra answers when
 * `fromExtra[i]`. Slot 0 and the last piece are the root element's tags. The answers' places
 * follow from the keys alone, so a record with the same keys (the same strings, childPath) and
 * string answers is written into a copy of `parts`: no sort into form order and no group
 * bookkeeping per submission (docs/architecture.md, "The submission record: one pass, few allocations").
 */
interface FlatTemplate {
  own: string[];
  extraKeys: string[] | null;
  parts: string[];
  slots: Int32Array;
  keys: string[];
  fromExtra: Uint8Array;
}

const FLAT_TEMPLATES_KEPT = 4;

/** The document from a kept template of these keys, or null (none kept, or an answer that is not a string). */
function fromTemplate(layout: FormLayout, rec: SubmissionRecord, more: Record<string, string> | undefined, own: string[], extraKeys: string[] | null, head: string, tail: string): string | null {
  const t = layout.templates.find((k) => sameKeys(k.own, own) && sameKeys(k.extraKeys, extraKeys));
  if (!t) return null;
  const parts = t.parts.slice();
  for (let i = 0; i < t.slots.length; i++) {
    const value = t.fromExtra[i] ? more![t.keys[i]!] : rec[t.keys[i]!];
    if (typeof value !== 'string') return null;
    parts[t.slots[i]!] = escapeXml(value);
  }
  parts[0] = head;
  parts[parts.length - 1] = tail;
  return parts.join('');
}

/** Per `fields` array (FormCache keeps it): built once per form, not per submission. */
const layouts = new WeakMap<FormField[], FormLayout>();

function layoutOf(fields: FormField[]): FormLayout {
  let layout = layouts.get(fields);
  if (!layout) {
    // Fields without an xpath (partial definitions in unit tests) get no tags; ranks never needed one.
    const tags = new Map(fields.filter((f) => typeof f.xpath === 'string').map((f) => [f.xpath, elementTags(f.xpath)] as const));
    const groups = fields.filter((f) => f.type === 'group' || f.type === 'repeat').length;
    layouts.set(fields, (layout = { rank: new Map(fields.map((f, i) => [f.xpath, i])), tags, groups, templates: [] }));
  }
  return layout;
}

/** `<q>` and `</q>` of the element at `path` (`g/q`). */
function elementTags(path: string): readonly [string, string] {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return [`<${name}>`, `</${name}>`];
}

/**
 * Renders a record as XForm instance XML (`<root id="id_string" version="...">...`), elements
 * in form order and unknown ones after. Used for JSON submissions and the generic_xml forwarder.
 * `extra`: top-level answers added after the record's own (the metadata of a stored instance),
 * as if the record held them; saves copying a large record to add them. `ownKeys`: the record's
 * own keys in their order (Object.keys), when the caller has them already (intake: one copy
 * of the keys serves this and canonicalJson).
 */
export function renderInstanceXml(
  form: Pick<FormEntity, 'fields' | 'rootName' | 'idString' | 'version'>, record: SubmissionRecord, extra?: Record<string, string>, ownKeys?: string[],
): string {
  const layout = layoutOf(form.fields);
  const own = ownKeys ?? Object.keys(record);
  // The extra keys the record does not hold, after its own (indexes m.. of the keys).
  let added: string[] | null = null;
  let extraKeys: string[] | null = null;
  if (extra) {
    for (const k in extra) {
      if (!Object.hasOwn(extra, k)) continue;
      (extraKeys ??= []).push(k);
      if (!Object.hasOwn(record, k)) (added ??= []).push(k);
    }
  }
  const version = form.version ? ` version="${escapeXml(form.version)}"` : '';
  const head = `<?xml version="1.0" encoding="UTF-8"?><${form.rootName} xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" id="${escapeXml(form.idString)}"${version}>`;
  const tail = `</${form.rootName}>`;
  const kept = fromTemplate(layout, record, extra, own, extraKeys, head, tail);
  if (kept !== null) return kept;
  const m = own.length;
  // Form order; keys the form does not know keep their order, after the known ones. Rank and
  // index packed into one number (rank x n + index: exact, far below 2^53) sort natively and
  // stably, with no object per key.
  const n = m + (added?.length ?? 0);
  const unknown = form.fields.length;
  const sorted = new Float64Array(n);
  for (let i = 0; i < n; i++) sorted[i] = (layout.rank.get(i < m ? own[i]! : added![i - m]!) ?? unknown) * n + i;
  sorted.sort();
  const flat = renderFlat(layout, record, extra, own, added, extraKeys, sorted, head, tail);
  if (flat !== null) return flat;
  return `${head}${renderTree(layout.rank, record, extra, added ? own.concat(added) : own, sorted)}${tail}`;
}

/**
 * The document of a record written straight from its keys in form order, where that gives what
 * renderTree gives: string answers only (no repeats), the keys of each group one after the
 * other, no path both a group and an answer; otherwise null. Through the tree a 250-answer
 * record allocated about 130 KB (a Map per group, an object per key, a string per piece of
 * output), a quarter of all its intake allocated (docs/architecture.md, "The submission record: one pass, few allocations").
 * `head` and `tail` (the root element's tags) are pieces of the one join: the document is one
 * flat string, not a concatenation that the database driver copies again to flatten it
 * (docs/architecture.md, "The submission record: one pass, few allocations").
 */
function renderFlat(
  layout: FormLayout, rec: SubmissionRecord, more: Record<string, string> | undefined, own: string[], added: string[] | null, extraKeys: string[] | null,
  sorted: Float64Array, head: string, tail: string,
): string | null {
  const m = own.length;
  const n = sorted.length;
  // Three pieces per answer, two per group and the root's two, in an array sized for them once
  // (growing it step by step allocated about as much as the output).
  const parts: string[] = new Array<string>(3 * n + 2 * layout.groups + 8);
  let p = 0;
  parts[p++] = head;
  const open: string[] = []; // paths of the open groups, outermost first
  let closed: Set<string> | null = null;
  const tags = (path: string) => layout.tags.get(path) ?? elementTags(path);
  const slots = new Int32Array(n);
  const keys: string[] = new Array<string>(n);
  const fromExtra = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const k = sorted[i]! % n;
    const key = k < m ? own[k]! : added![k - m]!;
    // Close the open groups this key is not inside.
    while (open.length) {
      const group = open[open.length - 1]!;
      if (key.length > group.length && key.charCodeAt(group.length) === 47 && key.startsWith(group)) break;
      open.pop();
      parts[p++] = tags(group)[1];
      (closed ??= new Set()).add(group);
    }
    // Open its groups below those. A group closed already, or a path that is an answer too, is the tree's case.
    let from = open.length ? open[open.length - 1]!.length + 1 : 0;
    for (let slash = key.indexOf('/', from); slash >= 0; from = slash + 1, slash = key.indexOf('/', from)) {
      const group = key.slice(0, slash);
      if (closed?.has(group) || Object.hasOwn(rec, group) || (more && Object.hasOwn(more, group))) return null;
      open.push(group);
      parts[p++] = tags(group)[0];
    }
    const extra = !!more && Object.hasOwn(more, key);
    const value = extra ? more[key] : rec[key];
    if (typeof value !== 'string') return null;
    const element = tags(key);
    parts[p++] = element[0];
    slots[i] = p;
    keys[i] = key;
    fromExtra[i] = extra ? 1 : 0;
    parts[p++] = escapeXml(value);
    parts[p++] = element[1];
  }
  while (open.length) parts[p++] = tags(open.pop()!)[1];
  parts[p++] = tail;
  parts.length = p;
  const document = parts.join('');
  // Kept without the answers (the slots hold empty strings until a copy is filled).
  for (let i = 0; i < n; i++) parts[slots[i]!] = '';
  if (layout.templates.length >= FLAT_TEMPLATES_KEPT) layout.templates.shift();
  // Copies of the key lists: the caller's may change after this returns.
  layout.templates.push({ own: own.slice(), extraKeys, parts, slots, keys, fromExtra });
  return document;
}

interface TreeNode {
  children: Map<string, TreeNode | TreeNode[] | string>;
}

/** The elements of any record (repeats, a group's keys apart, a path both a group and an answer) through a tree. */
function renderTree(order: Map<string, number>, record: SubmissionRecord, extra: Record<string, string> | undefined, all: string[], sorted: Float64Array): string {
  const build = (rec: SubmissionRecord, prefix: string, keys: string[], more?: Record<string, string>): TreeNode => {
    const root: TreeNode = { children: new Map() };
    for (const key of keys) {
      const start = prefix && key.startsWith(`${prefix}/`) ? prefix.length + 1 : 0;
      // The path's steps by indexOf (String.split cost most of this function on 250 answers).
      let node = root;
      let from = start;
      for (let slash = key.indexOf('/', from); slash >= 0; from = slash + 1, slash = key.indexOf('/', from)) {
        const step = key.slice(from, slash);
        let next = node.children.get(step);
        if (!next || typeof next === 'string' || Array.isArray(next)) node.children.set(step, (next = { children: new Map() }));
        node = next;
      }
      const value = more && Object.hasOwn(more, key) ? more[key]! : rec[key]!;
      node.children.set(key.slice(from), Array.isArray(value) ? value.map((item) => build(item, key, formOrder(order, Object.keys(item)))) : value);
    }
    return root;
  };
  const render = (node: TreeNode): string => {
    let out = '';
    for (const [name, v] of node.children) {
      if (typeof v === 'string') out += `<${name}>${escapeXml(v)}</${name}>`;
      else if (Array.isArray(v)) for (const item of v) out += `<${name}>${render(item)}</${name}>`;
      else out += `<${name}>${render(v)}</${name}>`;
    }
    return out;
  };
  return render(build(record, '', Array.from(sorted, (packed) => all[packed % all.length]!), extra));
}

/** Keys in form order, unknown ones after the known in their own order (stable sort). */
function formOrder(order: Map<string, number>, keys: string[]): string[] {
  return keys.map((key) => ({ key, rank: order.get(key) ?? 1e9 })).sort((a, b) => a.rank - b.rank).map((k) => k.key);
}
