import { InsufficientScopeError } from './errors.js';

/** `scope` claim (space-separated, RFC 8693 §4.2) as a list. */
export function scopesOf(scope: unknown): string[] {
  return typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [];
}

/** Scopes of `required` that `granted` lacks (all are needed). */
export function missingScopes(granted: readonly string[], required: readonly string[]): string[] {
  const have = new Set(granted);
  return required.filter((s) => !have.has(s));
}

export function hasAllScopes(granted: readonly string[], required: readonly string[]): boolean {
  return missingScopes(granted, required).length === 0;
}

/** Throws InsufficientScopeError naming the missing scopes. */
export function requireScopes(token: { scopes: readonly string[] }, required: readonly string[]): void {
  const missing = missingScopes(token.scopes, required);
  if (missing.length > 0) throw new InsufficientScopeError(missing);
}
