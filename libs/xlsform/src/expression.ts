// Recognises the parts of XPath expressions the converter cares about: `${name}` references
// (and `${last-saved#name}`), XML names, and whether a default is a calculation. One pass
// over the text each, so conversion stays linear in the size of the form.

const NAME_START = 'A-Z_a-z\\u00c0-\\u00d6\\u00d8-\\u00f6\\u00f8-\\u02ff\\u0370-\\u037d\\u037f-\\u1fff\\u200c-\\u200d\\u2070-\\u218f\\u2c00-\\u2fef\\u3001-\\ud7ff\\uf900-\\ufdcf\\ufdf0-\\ufffd';
const NAME_CHAR = `${NAME_START}\\-.0-9\\u00b7\\u0300-\\u036f\\u203f-\\u2040`;
export const NCNAME = `[${NAME_START}][${NAME_CHAR}]*`;

const RE_XML_TAG = new RegExp(`^${NCNAME}(?::${NCNAME})?$`, 'u');
/** A well-formed reference; `last` marks `${last-saved#name}`. */
export const RE_REF = new RegExp(`\\$\\{(last-saved#)?(${NCNAME})\\}`, 'gu');
const RE_REF_OUTER = /\$\{([^}]+)\}|\$\{[^}]*$/g;
const RE_REF_INNER = new RegExp(`^(last-saved#)?(${NCNAME})$`, 'u');

export function isXmlTag(value: string | undefined): boolean {
  return !!value && RE_XML_TAG.test(value);
}

export interface ParsedRef {
  name: string;
  lastSaved: boolean;
}

export class MalformedReference extends Error {}

/** Every `${...}` in the text; throws MalformedReference for `${}` that holds no name or is not closed. */
export function parseReferences(value: string): ParsedRef[] {
  if (value.length <= 2 || !value.includes('${')) return [];
  const refs: ParsedRef[] = [];
  for (const m of value.matchAll(RE_REF_OUTER)) {
    const inner = m[1] === undefined ? null : RE_REF_INNER.exec(m[1]);
    if (!inner) throw new MalformedReference(m[0]);
    refs.push({ name: inner[2], lastSaved: inner[1] !== undefined });
  }
  return refs;
}

export function hasReference(value: string | undefined): boolean {
  if (!value) return false;
  try {
    return parseReferences(value).length > 0;
  } catch {
    return false;
  }
}

/** True when the whole value is one reference such as `${q1}`. */
export function isReference(value: string | undefined): boolean {
  if (!value) return false;
  const m = /^\$\{([^}]+)\}$/.exec(value);
  return !!m && RE_REF_INNER.test(m[1]);
}

const RE_DATETIME_TOKEN = /-?\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?((\+|-)\d{2}:\d{2}|Z)?)?/y;
const RE_TIME_TOKEN = /\d{2}:\d{2}:\d{2}/y;
const RE_NUMBER_TOKEN = /-?(\d+\.\d*|\.\d+|\d+)/y;
const RE_FUNC_TOKEN = new RegExp(`${NCNAME}(?::${NCNAME})?\\(`, 'uy');
const RE_NAME_TOKEN = new RegExp(`${NCNAME}(?::${NCNAME})?`, 'uy');

function stickyAt(re: RegExp, text: string, at: number): number {
  re.lastIndex = at;
  const m = re.exec(text);
  return m ? m[0].length : 0;
}

/**
 * pyxform's default_is_dynamic: a default is a calculation (set by a setvalue action rather than
 * written into the instance) when it holds an arithmetic operator, a union, a reference or a
 * function call. For dates and geo types a '-' means a literal value, not a subtraction.
 */
export function defaultIsDynamic(value: string | undefined, type?: string): boolean {
  if (!value) return false;
  const dashIsLiteral = type !== undefined && ['date', 'dateTime', 'geopoint', 'geotrace', 'geoshape'].includes(type);
  let i = 0;
  while (i < value.length) {
    const c = value[i];
    const literal = stickyAt(RE_DATETIME_TOKEN, value, i) || stickyAt(RE_TIME_TOKEN, value, i) || stickyAt(RE_NUMBER_TOKEN, value, i);
    if (literal) {
      i += literal;
    } else if (c === '"' || c === "'") {
      const end = value.indexOf(c, i + 1);
      i = end < 0 ? value.length : end + 1;
    } else if (value.startsWith('${', i)) {
      const end = value.indexOf('}', i);
      if (end > 0 && RE_REF_INNER.test(value.slice(i + 2, end))) return true;
      i += 2;
    } else if (c === '-') {
      return !dashIsLiteral;
    } else if (c === '*' || c === '+' || c === '|') {
      return true;
    } else if (c === ' ' && (value.startsWith(' mod ', i) || value.startsWith(' div ', i))) {
      return true;
    } else if (stickyAt(RE_FUNC_TOKEN, value, i)) {
      return true;
    } else {
      i += stickyAt(RE_NAME_TOKEN, value, i) || 1;
    }
  }
  return false;
}
