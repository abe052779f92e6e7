import type { FormField } from '../forms/form.entity.js';
import type { Choice } from '../openrosa/xform-choices.js';

/** Query options of the CSV/XLSX exports (docs/exports.md). */
export interface ExportOptions {
  splitSelectMultiples: boolean;
  includeLabels: boolean;
  groupDelimiter: '/' | '.';
  removeGroupName: boolean;
  /** CSV cells that a spreadsheet would read as formulas get a `'` in front; only `false` turns it off (older stored jobs lack it). */
  escapeFormulas?: boolean;
}

export type { Choice } from '../openrosa/xform-choices.js';

type Value = string | number | null;
type Answers = Record<string, unknown>;

/** One output column: its header, its label (second header row) and how a record yields its cell. */
export interface Column {
  header: string;
  label: string;
  cell(record: Answers): Value;
}

/** The metadata columns after the form's fields (docs/exports.md, "Columns"). */
export const METADATA_COLUMNS = ['_id', '_uuid', '_submission_time', '_version', '_submitted_by'] as const;
export type ExportMetadata = Record<(typeof METADATA_COLUMNS)[number], string | number | null>;

const MULTIPLE = new Set(['select all that apply', 'select multiple', 'select_multiple']);

/**
 * The fields an export shows: the newest definition in form order, then fields that only
 * older definitions had (so answers given to an earlier version keep their column), each once.
 */
export function exportFields(newest: readonly FormField[], older: ReadonlyArray<readonly FormField[]> = []): FormField[] {
  const seen = new Set(newest.map((f) => f.xpath));
  const out = [...newest];
  for (const fields of older) for (const f of fields) if (!seen.has(f.xpath)) (seen.add(f.xpath), out.push(f));
  return out;
}

/** A repeat and what it holds: its own questions and the repeats nested in it, in form order. */
export interface RepeatScope {
  /** The repeat's xpath; '' for the submission itself. */
  xpath: string;
  name: string;
  label: string | null;
  leaves: FormField[];
  repeats: RepeatScope[];
  /** Its questions and repeats together, in form order. */
  items: Array<FormField | RepeatScope>;
  /** jsonpath to every instance list of this repeat in a submission (`$."rep"[*]."rep/sub"`). */
  jsonPath: string;
}

/** The scope tree of a field list: questions by their innermost repeat (groups only name paths). */
export function scopeTree(fields: readonly FormField[]): RepeatScope {
  const root: RepeatScope = { xpath: '', name: '', label: null, leaves: [], repeats: [], items: [], jsonPath: '$' };
  const byXpath = new Map<string, RepeatScope>([['', root]]);
  for (const f of fields) {
    const parent = byXpath.get(f.repeat ?? '') ?? root;
    if (f.type === 'group') continue;
    if (f.type === 'repeat') {
      const scope: RepeatScope = { xpath: f.xpath, name: f.name, label: f.label, leaves: [], repeats: [], items: [], jsonPath: `${parent.xpath ? `${parent.jsonPath}[*]` : '$'}.${JSON.stringify(f.xpath)}` };
      byXpath.set(f.xpath, scope);
      parent.repeats.push(scope);
      parent.items.push(scope);
    } else {
      parent.leaves.push(f);
      parent.items.push(f);
    }
  }
  return root;
}

/** Every repeat under `scope`, depth first in form order. */
export function allRepeats(scope: RepeatScope): RepeatScope[] {
  return scope.repeats.flatMap((r) => [r, ...allRepeats(r)]);
}

/**
 * A column header: the xpath's segments joined by the delimiter, each repeat segment followed
 * by its 1-based index when `indices` has one (`kids[2]/name`); `removeGroupName` drops the
 * segments of plain groups (repeats and the question stay).
 */
export function header(xpath: string, repeats: ReadonlySet<string>, indices: ReadonlyMap<string, number>, o: ExportOptions): string {
  const parts = xpath.split('/');
  const out: string[] = [];
  parts.forEach((part, i) => {
    const path = parts.slice(0, i + 1).join('/');
    const isLast = i === parts.length - 1;
    if (o.removeGroupName && !isLast && !repeats.has(path)) return;
    const index = indices.get(path);
    out.push(index ? `${part}[${index}]` : part);
  });
  return out.join(o.groupDelimiter);
}

function answerOf(record: Answers, xpath: string): string | null {
  const v = record[xpath];
  return typeof v === 'string' ? v : v === undefined || v === null ? null : String(v);
}

/** The columns of one question: one, or one 0/1 column per choice of a split select-multiple. */
function leafColumns(f: FormField, head: string, o: ExportOptions, choices: ReadonlyMap<string, Choice[]>, pick: (r: Answers) => Answers | undefined): Column[] {
  const label = f.label ?? f.name;
  if (o.splitSelectMultiples && MULTIPLE.has(f.type)) {
    return (choices.get(f.xpath) ?? []).map((c) => ({
      header: `${head}${o.groupDelimiter}${c.value}`,
      label: c.label ?? c.value,
      cell: (r: Answers) => {
        const rec = pick(r);
        const answer = rec ? answerOf(rec, f.xpath) : null;
        return answer === null ? null : answer.split(/\s+/).includes(c.value) ? 1 : 0;
      },
    }));
  }
  return [{ header: head, label, cell: (r: Answers) => { const rec = pick(r); return rec ? answerOf(rec, f.xpath) : null; } }];
}

function itemAt(rec: Answers | undefined, xpath: string, index: number): Answers | undefined {
  const list = rec?.[xpath];
  return Array.isArray(list) ? (list[index] as Answers | undefined) : undefined;
}

/**
 * CSV columns: one row per submission, repeats flattened as `rep[i]/q` columns for i up to the
 * most instances any submission has (`counts`, by repeat xpath), nested repeats inside them.
 */
export function csvColumns(tree: RepeatScope, counts: ReadonlyMap<string, number>, choices: ReadonlyMap<string, Choice[]>, o: ExportOptions): Column[] {
  const repeats = new Set(allRepeats(tree).map((r) => r.xpath));
  const walk = (scope: RepeatScope, indices: Map<string, number>, pick: (r: Answers) => Answers | undefined): Column[] => {
    const cols: Column[] = [];
    for (const item of scope.items) {
      if (!('items' in item)) {
        cols.push(...leafColumns(item, header(item.xpath, repeats, indices, o), o, choices, pick));
        continue;
      }
      for (let i = 1; i <= (counts.get(item.xpath) ?? 0); i++) {
        const at = new Map(indices).set(item.xpath, i);
        cols.push(...walk(item, at, (r) => itemAt(pick(r), item.xpath, i - 1)));
      }
    }
    return cols;
  };
  return walk(tree, new Map(), (r) => r);
}

/** Columns of one XLSX sheet: the scope's own questions (headers without indices). */
export function sheetColumns(scope: RepeatScope, tree: RepeatScope, choices: ReadonlyMap<string, Choice[]>, o: ExportOptions): Column[] {
  const repeats = new Set(allRepeats(tree).map((r) => r.xpath));
  return scope.leaves.flatMap((f) => leafColumns(f, header(f.xpath, repeats, new Map(), o), o, choices, (r) => r));
}

/** The metadata columns, read from a row's metadata. */
export function metadataColumns(): Array<{ header: string; label: string; cell(m: ExportMetadata): Value }> {
  return METADATA_COLUMNS.map((name) => ({ header: name, label: name, cell: (m: ExportMetadata) => m[name] }));
}

/** The form's choices, then values the answers use that the form does not list (in text order). */
export function mergeChoices(declared: Choice[] | undefined, seen: readonly string[]): Choice[] {
  const out = [...(declared ?? [])];
  const known = new Set(out.map((c) => c.value));
  for (const v of seen) if (!known.has(v)) (known.add(v), out.push({ value: v, label: null }));
  return out;
}

/** Whether a field's answers are split into choice columns under these options. */
export function isSplit(f: FormField, o: ExportOptions): boolean {
  return o.splitSelectMultiples && MULTIPLE.has(f.type);
}

/** An XLSX sheet name for a repeat: at most 31 characters, none of `[]:*?/\`, unique among `taken`. */
export function sheetName(name: string, taken: Set<string>): string {
  const base = name.replace(/[[\]:*?/\\]/g, '_').slice(0, 31) || 'repeat';
  let candidate = base;
  for (let i = 2; taken.has(candidate.toLowerCase()); i++) candidate = `${base.slice(0, 31 - String(i).length - 1)}_${i}`;
  taken.add(candidate.toLowerCase());
  return candidate;
}
