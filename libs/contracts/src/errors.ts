/**
 * Error body shapes of docs/api-conventions.md: `{"detail": "..."}` for non-field errors and
 * `{"<field>": ["message", ...]}` for field errors. Every service answers in one of these.
 */
/** `detail`, and sometimes lists of messages beside it (`errors`, `warnings` of a conversion failure). */
export type DetailError = { detail: string; [list: string]: string | string[] };
export type FieldErrors = Record<string, string[]>;
export type ErrorBody = DetailError | FieldErrors;

export const NOT_FOUND_DETAIL = 'Not found.';
