// Small helpers shared by the sheet readers: cell values as strings or per-language maps,
// sheet-name misspelling hints, CSV cells and attaching a node to its parent.
import type { Cell, GroupedRow } from '../headers.js';
import type { FormNode, Translatable } from '../model.js';

export const str = (c: Cell | undefined): string | undefined => (typeof c === 'string' ? c : undefined);
export const translatable = (c: Cell | undefined): Translatable | undefined => {
  if (c === undefined) return undefined;
  if (typeof c === 'string') return c;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(c)) if (typeof v === 'string') out[k] = v;
  return out;
};
export const sub = (row: GroupedRow, key: string): Record<string, Cell> => {
  const v = row[key];
  return v !== undefined && typeof v !== 'string' ? v : {};
};

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}


const SUPPORTED = new Set(['survey', 'choices', 'settings', 'external_choices', 'osm', 'entities']);
export function misspelling(key: string, names: string[]): string | undefined {
  const candidates = names.filter((n) => levenshtein(n.toLowerCase(), key) <= 2 && !SUPPORTED.has(n) && !n.startsWith('_'));
  if (candidates.length === 0) return undefined;
  return `When looking for a sheet named '${key}', the following sheets with similar names were found: ${candidates.map((c) => `'${c}'`).join(', ')}.`;
}

export function csvCell(v: string): string {
  return `"${v.replace(/"/g, '""')}"`;
}

/** Python's os.path.splitext(name)[0]: the name without its last extension (leading dots kept). */
export function splitext(name: string): string {
  const dot = name.lastIndexOf('.');
  const slash = name.lastIndexOf('/');
  if (dot <= slash + 1) return name;
  if (name.slice(slash + 1, dot).replace(/\./g, '') === '') return name;
  return name.slice(0, dot);
}

export function attach(parent: FormNode, child: FormNode): void {
  parent.children.push(child);
  child.parent = parent;
}
