import { FieldValidationError } from '@collect/contracts';
import type { FormEntity, FormField } from '../forms/form.entity.js';
import { DEFAULT_INPUT_LIMITS, inputTooLarge, type InputLimits, type XmlNode } from '../openrosa/xml.js';
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
