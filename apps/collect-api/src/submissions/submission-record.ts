import { createHash } from 'node:crypto';
import { FieldValidationError } from '@collect/contracts';
import type { FormEntity, FormField } from '../forms/form.entity.js';
import { escapeXml, type XmlNode } from '../openrosa/xml.js';
import type { SubmissionRecord } from './submission.entity.js';

/** An xpath of XML names: `q`, `group/q`. */
const XPATH_RE = /^[A-Za-z_][A-Za-z0-9_.-]*(\/[A-Za-z_][A-Za-z0-9_.-]*)*$/;
const MAX_DEPTH = 32;

function repeatPaths(form: Pick<FormEntity, 'fields'>): Set<string> {
  return new Set(form.fields.filter((f) => f.type === 'repeat').map((f) => f.xpath));
}

/**
 * The instance XML (children of the root element) as a flat record: `group/q` → "value";
 * a repeat (declared in the form, or an element that occurs more than once) → array of records
 * keyed by full xpath (`rep/q`). Empty answers are left out. Attributes are ignored.
 */
export function recordFromXml(root: XmlNode, form: Pick<FormEntity, 'fields'>): SubmissionRecord {
  const repeats = repeatPaths(form);
  const fill = (node: XmlNode, prefix: string, out: SubmissionRecord, depth: number) => {
    if (depth > MAX_DEPTH) throw new FieldValidationError({ xml_submission_file: ['The instance is nested too deeply.'] });
    const counts = new Map<string, number>();
    for (const c of node.children) counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
    for (const el of node.children) {
      const xpath = prefix ? `${prefix}/${el.name}` : el.name;
      if (repeats.has(xpath) || (el.children.length && (counts.get(el.name) ?? 0) > 1)) {
        const item: SubmissionRecord = {};
        fill(el, xpath, item, depth + 1);
        const list = (out[xpath] ??= []) as SubmissionRecord[];
        if (Object.keys(item).length) list.push(item);
        continue;
      }
      if (el.children.length) fill(el, xpath, out, depth + 1);
      else if (el.text !== '') out[xpath] = el.text;
    }
  };
  const out: SubmissionRecord = {};
  fill(root, '', out, 0);
  for (const [k, v] of Object.entries(out)) if (Array.isArray(v) && !v.length) delete out[k];
  return out;
}

/**
 * A JSON submission as the same flat record: nested objects are groups (`{"g": {"q": 1}}`),
 * flat xpath keys are accepted as they are (`{"g/q": 1}`), arrays of objects are repeats.
 * Scalars become strings; null/empty answers are left out; `_`-prefixed keys (metadata of the
 * output shape) are ignored. Throws 400 with the offending keys.
 */
export function recordFromJson(input: Record<string, unknown>): SubmissionRecord {
  const problems: string[] = [];
  const fill = (obj: Record<string, unknown>, prefix: string, out: SubmissionRecord, depth: number) => {
    if (depth > MAX_DEPTH) {
      problems.push(`${prefix}: nested too deeply`);
      return;
    }
    for (const [key, value] of Object.entries(obj)) {
      if (!prefix && key.startsWith('_')) continue;
      // Inside a repeat item, keys may already carry the repeat path (`rep/q`).
      const xpath = prefix && !key.startsWith(`${prefix}/`) ? `${prefix}/${key}` : key;
      if (!XPATH_RE.test(xpath)) {
        problems.push(`${xpath}: not a valid field name or xpath`);
        continue;
      }
      if (value === null || value === undefined || value === '') continue;
      if (Array.isArray(value)) {
        if (value.every((v) => v && typeof v === 'object' && !Array.isArray(v))) {
          const items: SubmissionRecord[] = [];
          for (const v of value) {
            const item: SubmissionRecord = {};
            fill(v as Record<string, unknown>, xpath, item, depth + 1);
            if (Object.keys(item).length) items.push(item);
          }
          if (items.length) out[xpath] = ([...((out[xpath] as SubmissionRecord[] | undefined) ?? []), ...items]);
        } else if (value.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) {
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
  const out: SubmissionRecord = {};
  fill(input, '', out, 0);
  if (problems.length) throw new FieldValidationError({ submission: problems });
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
  const raw = field ? record[field.xpath] : undefined;
  if (typeof raw !== 'string') return [null, null];
  const [lat, lng] = raw.trim().split(/\s+/).map(Number);
  return Number.isFinite(lat) && Number.isFinite(lng) ? [lat, lng] : [null, null];
}

interface TreeNode {
  children: Map<string, TreeNode | TreeNode[] | string>;
}

/**
 * Renders a record as XForm instance XML (`<root id="id_string" version="...">...`), elements
 * in form order and unknown ones after. Used for JSON submissions and the generic_xml forwarder.
 */
export function renderInstanceXml(form: Pick<FormEntity, 'fields' | 'rootName' | 'idString' | 'version'>, record: SubmissionRecord): string {
  const order = new Map(form.fields.map((f, i) => [f.xpath, i]));
  const build = (rec: SubmissionRecord, prefix: string): TreeNode => {
    const root: TreeNode = { children: new Map() };
    const keys = Object.keys(rec).sort((a, b) => (order.get(a) ?? 1e9) - (order.get(b) ?? 1e9));
    for (const key of keys) {
      const rel = prefix && key.startsWith(`${prefix}/`) ? key.slice(prefix.length + 1) : key;
      const parts = rel.split('/');
      let node = root;
      for (const part of parts.slice(0, -1)) {
        let next = node.children.get(part);
        if (!next || typeof next === 'string' || Array.isArray(next)) node.children.set(part, (next = { children: new Map() }));
        node = next;
      }
      const last = parts[parts.length - 1];
      const value = rec[key];
      node.children.set(last, Array.isArray(value) ? value.map((item) => build(item, key)) : value);
    }
    return root;
  };
  const render = (node: TreeNode): string =>
    [...node.children.entries()]
      .map(([name, v]) =>
        typeof v === 'string' ? `<${name}>${escapeXml(v)}</${name}>` : Array.isArray(v) ? v.map((item) => `<${name}>${render(item)}</${name}>`).join('') : `<${name}>${render(v)}</${name}>`,
      )
      .join('');
  const version = form.version ? ` version="${escapeXml(form.version)}"` : '';
  return `<?xml version="1.0" encoding="UTF-8"?><${form.rootName} xmlns:jr="http://openrosa.org/javarosa" xmlns:orx="http://openrosa.org/xforms" id="${escapeXml(form.idString)}"${version}>${render(build(record, ''))}</${form.rootName}>`;
}
