/**
 * The `fields` subset of a service (docs/restservices.md, "Shaping"): a key is kept when it is a
 * selected xpath, lies inside a selected group (`group` keeps `group/q`), or is a repeat that
 * holds a selected xpath (its items are cut down by the same rule). `keep` decides what stays
 * whatever the selection: every `_`-prefixed metadata field in JSON, the `meta` block in XML.
 */
export function selectFields<T extends Record<string, unknown>>(record: T, fields: readonly string[] | null | undefined, keep: (key: string) => boolean): T {
  if (!fields) return record;
  const selected = new Set(fields);
  const inside = (key: string) => {
    for (let i = key.indexOf('/'); i > 0; i = key.indexOf('/', i + 1)) if (selected.has(key.slice(0, i))) return true;
    return false;
  };
  const holdsSelected = (key: string) => fields.some((f) => f.startsWith(`${key}/`));
  const cut = (rec: Record<string, unknown>, top: boolean): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(rec)) {
      if ((top && keep(key)) || selected.has(key) || inside(key)) out[key] = value;
      else if (Array.isArray(value) && holdsSelected(key)) {
        out[key] = value.map((item) => (item && typeof item === 'object' && !Array.isArray(item) ? cut(item as Record<string, unknown>, false) : item));
      }
    }
    return out;
  };
  return cut(record, true) as T;
}

/** JSON payloads keep every `_`-prefixed metadata field. */
export const isJsonMetadata = (key: string): boolean => key.startsWith('_');

/** XML payloads keep the instance's `meta` block (instanceID and the like) and `formhub/uuid`. */
export const isXmlMetadata = (key: string): boolean => key.startsWith('meta/') || key.startsWith('formhub/');
