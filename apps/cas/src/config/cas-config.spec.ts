import { ConfigError } from '@collect/platform';
import { loadCasConfig } from './cas-config.js';

describe('cas configuration', () => {
  it('applies documented defaults', () => {
    const sut = loadCasConfig({});
    expect(sut.CAS_PORT).toBe(4000);
    expect(sut.CAS_ISSUER).toBe('http://localhost:4000');
  });

  it.each([['abc'], ['0'], ['65536']])('rejects CAS_PORT=%s naming the variable', (value) => {
    expect(() => loadCasConfig({ CAS_PORT: value })).toThrow(ConfigError);
    expect(() => loadCasConfig({ CAS_PORT: value })).toThrow(/CAS_PORT/);
  });

  it('rejects an issuer that is not an absolute URL', () => {
    expect(() => loadCasConfig({ CAS_ISSUER: 'cas.example.org' })).toThrow(/CAS_ISSUER/);
  });

  it('refuses dev-only defaults in production, naming each variable', () => {
    expect(() => loadCasConfig({ NODE_ENV: 'production', CAS_DEV_SEED_FILE: '/x.json' })).toThrow(/CAS_KEY_ENCRYPTION_KEY[\s\S]*CAS_COOKIE_KEYS[\s\S]*CAS_DEV_SEED_FILE/);
    const ok = loadCasConfig({ NODE_ENV: 'production', CAS_KEY_ENCRYPTION_KEY: 'k'.repeat(32), CAS_COOKIE_KEYS: 'a,b' });
    expect(ok.CAS_COOKIE_KEYS).toEqual(['a', 'b']);
  });
});
