/**
 * Error body shapes of docs/api-conventions.md: `{"detail": "..."}` for non-field errors and
 * `{"<field>": ["message", ...]}` for field errors. Every service answers in one of these.
 */
export type DetailError = { detail: string };
export type FieldErrors = Record<string, string[]>;
export type ErrorBody = DetailError | FieldErrors;

export const NOT_FOUND_DETAIL = 'Not found.';
