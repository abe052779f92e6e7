import { ConfigError } from '@collect/platform';
import { loadCollectConfig } from '../config/collect-config.js';

describe('auth configuration', () => {
  it('defaults: every scheme, dev admin and dev secret outside production', () => {
    const config = loadCollectConfig({ NODE_ENV: 'development' });
    expect(config.AUTH_SCHEMES).toEqual(['basic', 'token', 'temptoken', 'bearer']);
    expect(config.DEFAULT_TEMP_TOKEN_EXPIRY_TIME).toBe(21600);
    expect(config.OAUTH2_ACCESS_TOKEN_EXPIRE_SECONDS).toBe(36000);
    expect(config.OAUTH2_AUTHORIZATION_CODE_EXPIRE_SECONDS).toBe(60);
    expect(config.COLLECT_ADMIN_USERNAME).toBe('admin');
    expect(config.COLLECT_ADMIN_PASSWORD).toBe('admin-password');
    expect(config.COLLECT_SECRET_KEY.length).toBeGreaterThanOrEqual(32);
    expect(config.CORS_ALLOWED_ORIGINS).toEqual(['*']);
  });

  it('parses AUTH_SCHEMES case-insensitively and refuses unknown or empty lists', () => {
    expect(loadCollectConfig({ AUTH_SCHEMES: 'Basic, TempToken' }).AUTH_SCHEMES).toEqual(['basic', 'temptoken']);
    expect(() => loadCollectConfig({ AUTH_SCHEMES: 'basic,digest' })).toThrow(/AUTH_SCHEMES/);
    expect(() => loadCollectConfig({ AUTH_SCHEMES: ' ' })).toThrow(/AUTH_SCHEMES/);
  });

  it('production: refuses to start with the default (or any localhost) CAS_ISSUER', () => {
    const base = { NODE_ENV: 'production', COLLECT_SECRET_KEY: 'k'.repeat(40) };
    expect(() => loadCollectConfig(base)).toThrow(/CAS_ISSUER: is required in production/);
    for (const issuer of ['http://localhost:4000', 'http://127.0.0.1:4000', 'http://[::1]:4000', 'https://cas.localhost']) {
      expect(() => loadCollectConfig({ ...base, CAS_ISSUER: issuer })).toThrow(/CAS_ISSUER/);
    }
    expect(loadCollectConfig({ ...base, CAS_ISSUER: 'https://auth.example.org/' }).CAS_ISSUER).toBe('https://auth.example.org');
    // Outside production the dev default stays.
    expect(loadCollectConfig({ NODE_ENV: 'development' }).CAS_ISSUER).toBe('http://localhost:4000');
  });

  it('production: needs COLLECT_SECRET_KEY, creates no admin unless configured', () => {
    expect(() => loadCollectConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadCollectConfig({ NODE_ENV: 'production', COLLECT_SECRET_KEY: 'short' })).toThrow(/COLLECT_SECRET_KEY/);
    const config = loadCollectConfig({ NODE_ENV: 'production', COLLECT_SECRET_KEY: 'k'.repeat(40), CAS_ISSUER: 'https://auth.example.org' });
    expect(config.COLLECT_ADMIN_USERNAME).toBeUndefined();
    expect(config.COLLECT_SECRET_KEY).toBe('k'.repeat(40));
  });
});
