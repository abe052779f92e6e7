/**
 * The `formId` of `/view/downloadSubmission` (docs/encryption.md "Briefcase pull"):
 * `<id_string>[<version part>]/<root>[@key=<instance id>]`, as ODK Briefcase and Aggregate write
 * it. The version part may be `@version=null and @uiVersion=null`, `@version=<v>`, or what
 * Briefcase sends (`@version=Optional[<v>] and @uiVersion=...`, `Optional.empty`); it is checked
 * for shape only, since the key names one submission. The root name is not checked.
 */
export interface FormIdPath {
  idString: string;
  /** The instance id as the key gives it (`uuid:` included when sent). */
  key: string;
}

const MAX_PATH_CHARS = 2_048;

/** The text inside the bracket group opening at `open` (nested brackets allowed), and the index after it; null when unbalanced. */
function bracketGroup(text: string, open: number): { inner: string; end: number } | null {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '[') depth++;
    else if (text[i] === ']' && --depth === 0) return { inner: text.slice(open + 1, i), end: i + 1 };
  }
  return null;
}

/** Null when the path is malformed (the route answers 400). */
export function parseFormIdPath(raw: string): FormIdPath | null {
  if (!raw || raw.length > MAX_PATH_CHARS) return null;
  const idEnd = raw.search(/[[/]/);
  if (idEnd <= 0) return null;
  const idString = raw.slice(0, idEnd);
  let at = idEnd;
  if (raw[at] === '[') {
    const version = bracketGroup(raw, at);
    if (!version || !/^\s*@version\s*=/.test(version.inner)) return null;
    at = version.end;
  }
  if (raw[at] !== '/') return null;
  const rest = raw.slice(at + 1);
  const open = rest.indexOf('[');
  if (open <= 0 || /[/\]]/.test(rest.slice(0, open))) return null;
  const group = bracketGroup(rest, open);
  if (!group || group.end !== rest.length) return null;
  const key = /^\s*@key\s*=\s*(.+?)\s*$/.exec(group.inner)?.[1];
  if (!key || /[[\]\s]/.test(key)) return null;
  return { idString, key };
}
