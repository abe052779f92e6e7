import { createHash } from 'node:crypto';
import { FieldValidationError } from '@collect/contracts';
import type { FormEntity, FormField } from '../forms/form.entity.js';
import { DEFAULT_INPUT_LIMITS, escapeXml, inputTooLarge, type InputLimits, type XmlNode } from '../openrosa/xml.js';
import type { SubmissionRecord } from './submission.entity.js';

/** An xpath of XML names: `q`, `group/q`. */
const XPATH_RE = /^[A-Za-z_][A-Za-z0-9_.-]*(\/[A-Za-z_][A-Za-z0-9_.-]*)*$/;
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
      const xpath = prefix ? `${prefix}/${el.name}` : el.name;
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
 */
export function recordFromJson(input: Record<string, unknown>, limits: Pick<InputLimits, 'maxDepth' | 'maxNodes'> = DEFAULT_INPUT_LIMITS): SubmissionRecord {
  const problems: string[] = [];
  let nodes = 0;
  const fill = (obj: Record<string, unknown>, prefix: string, out: SubmissionRecord, depth: number) => {
    if (depth > limits.maxDepth) {
      problems.push(`${prefix}: nested too deeply`);
      return;
    }
    for (const key of Object.keys(obj)) {
      const value = obj[key];
      if (++nodes > limits.maxNodes) throw inputTooLarge('submission', limits.maxNodes, 'INPUT_MAX_NODES');
      if (!prefix && key.startsWith('_')) continue;
      // The key alone is checked: the prefix was checked one level up, so the work per key is
      // bounded by MAX_XPATH_LENGTH, not by the depth.
      if (key.length > MAX_XPATH_LENGTH || !XPATH_RE.test(key)) {
        problems.push(`${key.slice(0, 100)}: not a valid field name or xpath`);
        continue;
      }
      // Inside a repeat item, keys may already carry the repeat path (`rep/q`).
      const xpath = prefix && !key.startsWith(`${prefix}/`) ? `${prefix}/${key}` : key;
      if (xpath.length > MAX_XPATH_LENGTH) {
        problems.push(`${key.slice(0, 100)}: the path is longer than ${MAX_XPATH_LENGTH} characters`);
        continue;
      }
      if (value === null || value === undefined || value === '') continue;
      if (Array.isArray(value)) {
        if (value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) {
          const existing = out[xpath];
          const items = Array.isArray(existing) ? existing : [];
          for (const v of value) {
            const item = emptyRecord();
            fill(v as Record<string, unknown>, xpath, item, depth + 1);
            if (hasKeys(item)) items.push(item);
          }
          // Appended in place: a repeat named by several keys (`g/r`, `{"g": {"r"}}`) must not copy the list each time.
          if (items.length) out[xpath] = items;
        } else if (value.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) {
          nodes += value.length;
          // A multiple-choice answer given as a list: XForms stores it space-separated.
          out[xpath] = value.map(String).join(' ');
        } else problems.push(`${xpath}: a list must hold only objects (a repeat) or only plain values`);
        continue;
      }
      if (typeof value === 'object') {
        fill(value as Record<string, unknown>, xpath, out, depth + 1);
        continue;
      }
      out[xpath] = String(value);
    }
  };
  const out = emptyRecord();
  fill(input, '', out, 0);
  if (problems.length) throw new FieldValidationError({ submission: problems.slice(0, 100) });
  return out;
}

/** `uuid:abc` → `abc`; the instanceID is stored without its scheme. */
export function stripUuidScheme(id: string): string {
  return id.replace(/^uuid:/i, '').trim();
}

/** Sorted-key JSON, so a re-submission with the same answers in any order hashes the same. */
export function contentHash(record: SubmissionRecord): string {
  const canon = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(canon) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon((v as Record<string, unknown>)[k])])) : v;
  return createHash('sha256').update(JSON.stringify(canon(record))).digest('hex');
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

interface TreeNode {
  children: Map<string, TreeNode | TreeNode[] | string>;
}

/** Each form's xpaths with their rank (form order), per `fields` array (FormCache keeps it). */
const ranks = new WeakMap<FormField[], Map<string, number>>();

function rankOf(fields: FormField[]): Map<string, number> {
  let order = ranks.get(fields);
  if (!order) ranks.set(fields, (order = new Map(fields.map((f, i) => [f.xpath, i]))));
  return order;
}

/**
 * Renders a record as XForm instance XML (`<root id="id_string" version="...">...`), elements
 * in form order and unknown ones after. Used for JSON submissions and the generic_xml forwarder.
 * `extra`: top-level answers added after the record's own (the metadata of a stored instance),
 * as if the record held them; saves copying a large record to add them.
 */
export function renderInstanceXml(form: Pick<FormEntity, 'fields' | 'rootName' | 'idString' | 'version'>, record: SubmissionRecord, extra?: Record<string, string>): string {
  const order = rankOf(form.fields);
  const build = (rec: SubmissionRecord, prefix: string, more?: Record<string, string>): TreeNode => {
    const root: TreeNode = { children: new Map() };
    // Form order; keys the form does not know keep their order, after the known ones (stable sort).
    const own = Object.keys(rec);
    const all = more ? own.concat(Object.keys(more).filter((k) => !Object.hasOwn(rec, k))) : own;
    const keys = all.map((key) => ({ key, rank: order.get(key) ?? 1e9 })).sort((a, b) => a.rank - b.rank);
    for (const { key } of keys) {
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
      node.children.set(key.slice(from), Array.isArray(value) ? value.map((item) => build(item, key)) : value);
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
  const version = form.version ? ` version="${escapeXml(form.version)}"` : '';
  return `<?xml version="1.0" encoding="UTF-8"?><${form.rootName} xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" id="${escapeXml(form.idString)}"${version}>${render(build(record, '', extra))}</${form.rootName}>`;
}
