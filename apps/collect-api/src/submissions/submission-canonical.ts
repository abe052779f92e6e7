import { createHash } from 'node:crypto';
import type { SubmissionRecord } from './submission.entity.js';

// The canonical form of a record: its sorted-key JSON and the content hash made of it.

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
export function sameKeys(a: readonly string[] | null, b: readonly string[] | null): boolean {
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
