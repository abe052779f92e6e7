/**
 * Text a user sets that lands in XML documents, headers or file names (docs/security.md,
 * "Numbers, formulas and names"). XML 1.0 cannot hold most control characters, lone surrogates,
 * U+FFFE or U+FFFF at all: escaping does not help, the document is no longer well-formed (ODK
 * Collect then cannot read the form list or the manifest). Bidirectional controls (U+061C,
 * U+200E/F, U+202A-202E, U+2066-2069) make a file name read differently from what it is
 * (`evil\u202Efdp.exe` shows as `evilexe.pdf`).
 */

/** Free text inside XML (labels): the characters XML 1.0 cannot hold. Tab, LF and CR stay allowed. */
export const XML_FORBIDDEN_CHARACTER = /[\x00-\x08\x0b\x0c\x0e-\x1f\p{Cs}\ufffe\uffff]/u;
/** A one-line title (form titles): no control character at all either; bidirectional marks stay (right-to-left titles use them). */
export const UNSAFE_TITLE_CHARACTER = /[\p{Cc}\p{Cs}\ufffe\uffff]/u;
/** A name that identifies a file: no control, no XML-forbidden and no bidirectional control character. */
export const UNSAFE_NAME_CHARACTER = /[\p{Cc}\p{Cs}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ufffe\uffff]/u;

export const XML_FORBIDDEN_MESSAGE = 'No control characters other than tab and line breaks (XML cannot hold them).';
export const UNSAFE_TITLE_MESSAGE = 'No control characters or characters XML cannot hold.';
export const UNSAFE_NAME_MESSAGE = 'No control characters, bidirectional controls or characters XML cannot hold.';

/** Whether `name` holds a character UNSAFE_NAME_CHARACTER refuses. */
export function hasUnsafeNameCharacter(name: string): boolean {
  return UNSAFE_NAME_CHARACTER.test(name);
}

/** class-validator checks (the `check` option of `@Text`) for each kind of text. */
export const XML_TEXT_CHECK = { test: (v: string) => !XML_FORBIDDEN_CHARACTER.test(v), message: XML_FORBIDDEN_MESSAGE };
export const TITLE_CHECK = { test: (v: string) => !UNSAFE_TITLE_CHARACTER.test(v), message: UNSAFE_TITLE_MESSAGE };
