import { InsufficientScopeError } from './errors.js';
import { hasAllScopes, missingScopes, requireScopes, scopesOf } from './scopes.js';

describe('scope helpers', () => {
  it('splits the scope claim on spaces and ignores non-strings', () => {
    expect(scopesOf('a  b c')).toEqual(['a', 'b', 'c']);
    expect(scopesOf(undefined)).toEqual([]);
    expect(scopesOf(['a'])).toEqual([]);
  });

  it('needs every required scope, exactly (no prefix matching)', () => {
    const granted = ['adminui-api-wrapper', 'read'];
    expect(hasAllScopes(granted, ['adminui-api-wrapper'])).toBe(true);
    expect(hasAllScopes(granted, ['adminui-api-wrapper', 'adminui-api-wrapper.users.search'])).toBe(false);
    expect(missingScopes(['adminui-api-wrapper.users.search'], ['adminui-api-wrapper', 'adminui-api-wrapper.users.search'])).toEqual(['adminui-api-wrapper']);
    expect(hasAllScopes(granted, [])).toBe(true);
  });

  it('requireScopes throws InsufficientScopeError naming what is missing', () => {
    expect(() => requireScopes({ scopes: ['a'] }, ['a', 'b', 'c'])).toThrow(new InsufficientScopeError(['b', 'c']));
    expect(() => requireScopes({ scopes: ['a'] }, ['a'])).not.toThrow();
  });
});
