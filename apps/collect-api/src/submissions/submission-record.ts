import { createHash } from 'node:crypto';
import { FieldValidationError } from '@collect/contracts';
import type { FormEntity, FormField } from '../forms/form.entity.js';
import { DEFAULT_INPUT_LIMITS, escapeXml, inputTooLarge, type InputLimits, type XmlNode } from '../openrosa/xml.js';
import type { SubmissionRecord } from './submission.entity.js';

/**
 * An xpath of XML names, `q`, `group/q`: /^[A-Za-z_][A-Za-z0-9_.-]*(\/[A-Za-z_][A-Za-z0-9_.-]*)*$/,
 * checked character by character. The regular expression ran once per answer and was a fifth of
 * recordFromJson's time on a 250-answer submission (docs/architecture.md, "The submission
 * record: one pass, few allocations").
 */
export function isXpath(key: string): boolean {
  let stepStart = true;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95; // A-Z a-z _
    if (stepStart) {
      if (!letter) return false;
      stepStart = false;
    } else if (c === 47) stepStart = true; // `/`
    else if (!letter && !(c >= 48 && c <= 57) && c !== 46 && c !== 45) return false; // 0-9 . -
  }
  return !stepStart;
}
/** Longest element name of an instance: answers are named after form fields (NAME_RE: 100). */
export const MAX_NAME_LENGTH = 255;
/**
 * Longest xpath (key of a record). Each key is built from its parent's path, so without a bound
 * a deep group with many short children makes the work grow with depth x children, not with
 * the input; with it, the work per value is bounded and parsing stays linear.
 */
export const MAX_XPATH_LENGTH = 1024;

/**
 * A record with no prototype: its keys are field names from the client, and `constructor`,
 * `__proto__` or `isPrototypeOf` must be plain keys, not Object.prototype's members (sibling
 * `<isPrototypeOf>` repeat elements once answered 500).
 */
export function emptyRecord(): SubmissionRecord {
  return Object.create(null) as SubmissionRecord;
}

/** Joined paths kept at most (a process-wide bound, whatever the bodies send). */
const JOINED_KEPT = 10_000;
/** Longer joined paths are built each time, not kept: the bound on what the cache may hold. */
const JOINED_MAX_LENGTH = 128;

/**
 * `prefix/name`, the xpath of a group's child, from a cache of the paths bodies named before:
 * per parent path, per child name (both strings V8 has hashed already, the parsed keys of a
 * body). Submissions of one form name the same paths every time; built afresh, a 250-answer
 * body made 250 new strings that V8 then hashed and looked up again as keys of the record, two
 * fifths of recordFromJson (docs/architecture.md, "The submission record: one pass, few allocations"). A
 * returned string is the one the record's keys were made of last time, so the record's insert
 * finds its hash ready. Bounded: past JOINED_KEPT entries the cache starts again empty, and
 * paths longer than JOINED_MAX_LENGTH are not kept, so a flood of new names costs the first
 * request's work, not memory.
 */
const joinedPaths = new Map<string, Map<string, string>>();
let joinedCount = 0;

export function childPath(prefix: string, name: string): string {
  let children = joinedPaths.get(prefix);
  const hit = children?.get(name);
  if (hit !== undefined) return hit;
  const path = `${prefix}/${name}`;
  if (path.length > JOINED_MAX_LENGTH) return path;
  if (joinedCount >= JOINED_KEPT) {
    joinedPaths.clear();
    joinedCount = 0;
    children = undefined;
  }
  if (!children) joinedPaths.set(prefix, (children = new Map()));
  children.set(name, path);
  joinedCount++;
  return path;
}

function repeatPaths(form: Pick<FormEntity, 'fields'>): Set<string> {
  return new Set(form.fields.filter((f) => f.type === 'repeat').map((f) => f.xpath));
}

/**
 * The instance XML (children of the root element) as a flat record: `group/q` → "value";
 * a repeat (declared in the form, or an element that occurs more than once) → array of records
 * keyed by full xpath (`rep/q`). Empty answers are left out. Attributes are ignored.
 * Linear in the document (parseXml already bounded its size and depth); a name longer than
 * MAX_NAME_LENGTH is a 400, so no xpath grows with the document.
 */
export function recordFromXml(root: XmlNode, form: Pick<FormEntity, 'fields'>, limits: Pick<InputLimits, 'maxDepth'> = DEFAULT_INPUT_LIMITS): SubmissionRecord {
  const repeats = repeatPaths(form);
  const fill = (node: XmlNode, prefix: string, out: SubmissionRecord, depth: number) => {
    if (depth > limits.maxDepth) throw new FieldValidationError({ xml_submission_file: ['The instance is nested too deeply.'] });
    const counts = new Map<string, number>();
    for (const c of node.children) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
    for (const el of node.children) {
      if (el.name.length > MAX_NAME_LENGTH) throw new FieldValidationError({ xml_submission_file: [`An element name is longer than ${MAX_NAME_LENGTH} characters.`] });
      const xpath = prefix ? childPath(prefix, el.name) : el.name;
      if (xpath.length > MAX_XPATH_LENGTH) throw new FieldValidationError({ xml_submission_file: [`An element path is longer than ${MAX_XPATH_LENGTH} characters.`] });
      if (repeats.has(xpath) || (el.children.length && (counts.get(el.name) ?? 0) > 1)) {
        const item = emptyRecord();
        fill(el, xpath, item, depth + 1);
        const existing = out[xpath];
        const list = Array.isArray(existing) ? existing : (out[xpath] = []);
        if (hasKeys(item)) list.push(item);
        continue;
      }
      if (el.children.length) fill(el, xpath, out, depth + 1);
      else if (el.text !== '') out[xpath] = el.text;
    }
  };
  const out = emptyRecord();
  fill(root, '', out, 0);
  for (const k of Object.keys(out)) {
    const v = out[k];
    if (Array.isArray(v) && !v.length) delete out[k];
  }
  return out;
}

function hasKeys(record: SubmissionRecord): boolean {
  for (const _ in record) return true;
  return false;
}

/**
 * A JSON submission as the same flat record: nested objects are groups (`{"g": {"q": 1}}`),
 * flat xpath keys are accepted as they are (`{"g/q": 1}`), arrays of objects are repeats.
 * Scalars become strings; null/empty answers are left out; `_`-prefixed keys (metadata of the
 * output shape) are ignored. Throws 400 with the offending keys. Linear in the body: keys are
 * at most MAX_NAME_LENGTH long, nesting at most `maxDepth`, values at most `maxNodes` (413).
 * `found`, when given, learns whether the record holds an answer, a key other than the
 * METADATA_KEYS (a submission without one is a 400): told while the record is filled, so that
 * neither this (an `in` lookup per answer) nor the caller (a copy of the keys) counts them.
 * One pass over the body and nothing thrown away per answer but what the record keeps: for-in
 * over the parsed objects (no Object.keys copy), the prefix compared in place, plain loops for
 * the list checks (docs/architecture.md, "The submission record: one pass, few allocations").
 */
export function recordFromJson(input: Record<string, unknown>, limits: Pick<InputLimits, 'maxDepth' | 'maxNodes'> = DEFAULT_INPUT_LIMITS, found?: { answers: boolean }): SubmissionRecord {
  const problems: string[] = [];
  let nodes = 0;
  let answers = false;
  const fill = (obj: Record<string, unknown>, prefix: string, out: SubmissionRecord, depth: number) => {
    if (depth > limits.maxDepth) {
      problems.push(`${prefix}: nested too deeply`);
      return;
    }
    for (const key in obj) {
      // Own keys only, as Object.keys gave them (a parsed body inherits nothing enumerable).
      if (!Object.hasOwn(obj, key)) continue;
      const value = obj[key];
      if (++nodes > limits.maxNodes) throw inputTooLarge('submission', limits.maxNodes, 'INPUT_MAX_NODES');
      if (!prefix && key.charCodeAt(0) === 95) continue; // `_`
      // The key alone is checked: the prefix was checked one level up, so the work per key is
      // bounded by MAX_XPATH_LENGTH, not by the depth.
      if (key.length > MAX_XPATH_LENGTH || !isXpath(key)) {
        problems.push(`${key.slice(0, 100)}: not a valid field name or xpath`);
        continue;
      }
      // Inside a repeat item, keys may already carry the repeat path (`rep/q`).
      const xpath = prefix && !startsWithStep(key, prefix) ? childPath(prefix, key) : key;
      if (xpath.length > MAX_XPATH_LENGTH) {
        problems.push(`${key.slice(0, 100)}: the path is longer than ${MAX_XPATH_LENGTH} characters`);
        continue;
      }
      if (value === null || value === undefined || value === '') continue;
      if (Array.isArray(value)) {
        if (everyItem(value, isPlainRecord)) {
          const existing = out[xpath];
          const items = Array.isArray(existing) ? existing : [];
          for (const v of value) {
            const item = emptyRecord();
            fill(v as Record<string, unknown>, xpath, item, depth + 1);
            if (hasKeys(item)) items.push(item);
          }
          // Appended in place: a repeat named by several keys (`g/r`, `{"g": {"r"}}`) must not copy the list each time.
          if (items.length) {
            if (!answers && out === record) answers = !isMetadataKey(xpath);
            out[xpath] = items;
          }
        } else if (everyItem(value, isScalar)) {
          nodes += value.length;
          // A multiple-choice answer given as a list: XForms stores it space-separated. join
          // converts strings, numbers and booleans as String() does (no mapped copy).
          if (!answers && out === record) answers = !isMetadataKey(xpath);
          out[xpath] = value.join(' ');
        } else problems.push(`${xpath}: a list must hold only objects (a repeat) or only plain values`);
        continue;
      }
      if (typeof value === 'object') {
        fill(value as Record<string, unknown>, xpath, out, depth + 1);
        continue;
      }
      if (!answers && out === record) answers = !isMetadataKey(xpath);
      out[xpath] = String(value);
    }
  };
  const record = emptyRecord();
  fill(input, '', record, 0);
  if (problems.length) throw new FieldValidationError({ submission: problems.slice(0, 100) });
  if (found) found.answers = answers;
  return record;
}

/** `key` starts with `prefix/` (compared in place: no `${prefix}/` string per key). */
function startsWithStep(key: string, prefix: string): boolean {
  return key.length > prefix.length && key.charCodeAt(prefix.length) === 47 && key.startsWith(prefix);
}

function everyItem(list: unknown[], test: (v: unknown) => boolean): boolean {
  for (const v of list) if (!test(v)) return false;
  return true;
}

function isPlainRecord(v: unknown): boolean {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

function isScalar(v: unknown): boolean {
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean';
}

/** Keys of a record that are metadata of the instance, not answers (intake takes them out of the stored answers). */
export const METADATA_KEYS: readonly string[] = ['meta/instanceID', 'meta/deprecatedID', 'formhub/uuid'];

function isMetadataKey(key: string): boolean {
  return METADATA_KEYS.includes(key);
}

/** `uuid:abc` → `abc`; the instanceID is stored without its scheme. */
export function stripUuidScheme(id: string): string {
  return id.replace(/^uuid:/i, '').trim();
}

/**
 * Sorted-key JSON, so a re-submission with the same answers in any order hashes the same. The
 * hash is stored and compared with later submissions' (duplicate detection), so its input stays
 * byte for byte `JSON.stringify` of a copy of the record with its keys sorted at every level.
 */
export function contentHash(record: SubmissionRecord): string {
  return contentHashOf(canonicalJson(record));
}

/** contentHash of a record whose canonicalJson the caller has already. */
export function contentHashOf(canonical: string): string {
  return createHash('sha256').update(canonical).digest('hex');
}

/**
 * The record as sorted-key JSON (contentHash's input). Intake writes it once and uses it twice:
 * hashed, and as the stored answers' JSON (jsonb keeps no key order, so these bytes store the
 * same value as the record's own JSON; docs/architecture.md, "The submission record: one pass, few allocations").
 * `keys`: the record's own keys (Object.keys) when the caller has them; they are kept (sortedKeys), not changed.
 *
 * A flat record (string answers, no repeats: every JSON submission to a form without repeats)
 * is written by JSON.stringify with its sorted keys as the property list, which writes the keys
 * in the list's order: no sorted copy (about twice the record; a quarter of what a 250-answer
 * submission allocated, docs/architecture.md, "The submission record: one pass, few allocations"). A key starting with a
 * digit may be integer-like, which an object lists first whatever its insertion order: such a
 * record, and any with repeats, is copied as before.
 */
export function canonicalJson(record: SubmissionRecord, keys: string[] = Object.keys(record)): string {
  let flat = true;
  for (const key of keys) {
    const first = key.charCodeAt(0);
    if (typeof record[key] !== 'string' || (first >= 48 && first <= 57)) {
      flat = false;
      break;
    }
  }
  if (flat) return JSON.stringify(record, sortedKeys(keys));
  const canon = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canon) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])])) : v;
  return JSON.stringify(canon(record));
}

/** Key lists equal element by element (the same strings, so mostly a pointer comparison). */
function sameKeys(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Key lists sorted lately, by their first key: one per form shape, a few kept. */
const sortedLately = new Map<string, { keys: string[]; sorted: string[] }>();
const SORTED_KEPT = 64;

/**
 * `keys` sorted. Submissions of one form list the same keys in the same order (the same
 * strings, childPath), so the order sorted last time is reused when every key is the one at the
 * same place then: a comparison per key instead of a sort (a 250-key sort was a fifth of
 * canonicalJson; docs/architecture.md, "The submission record: one pass, few allocations").
 */
function sortedKeys(keys: string[]): string[] {
  if (!keys.length) return keys;
  const last = sortedLately.get(keys[0]!);
  if (last && sameKeys(last.keys, keys)) return last.sorted;
  const sorted = keys.slice().sort();
  if (sortedLately.size >= SORTED_KEPT && !last) sortedLately.clear();
  sortedLately.set(keys[0]!, { keys: keys.slice(), sorted });
  return sorted;
}

/** All string values of a record with their xpath (repeats included), for attachment matching. */
export function* valuesOf(record: SubmissionRecord): Generator<[string, string]> {
  for (const [k, v] of Object.entries(record)) {
    if (Array.isArray(v)) for (const item of v) yield* valuesOf(item);
    else yield [k, v];
  }
}

const MEDIA_FIELD_TYPES = new Set(['image', 'audio', 'video', 'file']);

/** The file names a record's media questions answer (repeats included): the attachments it announces. */
export function announcedMedia(record: SubmissionRecord, fields: FormField[]): Set<string> {
  const media = fields.filter((f) => MEDIA_FIELD_TYPES.has(f.type)).map((f) => f.xpath);
  const names = new Set<string>();
  if (!media.length) return names;
  for (const [key, value] of valuesOf(record)) {
    // Keys inside a repeat may be the full xpath or relative to the repeat.
    if (value.trim() && media.some((x) => x === key || x.endsWith(`/${key}`))) names.add(value.trim());
  }
  return names;
}

/** The first geopoint answer outside repeats as [lat, lng], else [null, null]. */
export function geolocationOf(record: SubmissionRecord, fields: FormField[]): [number | null, number | null] {
  const field = fields.find((f) => f.type === 'geopoint' && !f.repeat);
  const raw = field && Object.hasOwn(record, field.xpath) ? record[field.xpath] : undefined;
  if (typeof raw !== 'string') return [null, null];
  const [lat, lng] = raw.trim().split(/\s+/).map(Number);
  return Number.isFinite(lat) && Number.isFinite(lng) ? [lat, lng] : [null, null];
}

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
