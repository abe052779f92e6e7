import { ConfigError } from '@collect/contracts';
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

  it('production: needs COLLECT_SECRET_KEY, creates no admin unless configured', () => {
    expect(() => loadCollectConfig({ NODE_ENV: 'production' })).toThrow(ConfigError);
    expect(() => loadCollectConfig({ NODE_ENV: 'production', COLLECT_SECRET_KEY: 'short' })).toThrow(/COLLECT_SECRET_KEY/);
    const config = loadCollectConfig({ NODE_ENV: 'production', COLLECT_SECRET_KEY: 'k'.repeat(40) });
    expect(config.COLLECT_ADMIN_USERNAME).toBeUndefined();
    expect(config.COLLECT_SECRET_KEY).toBe('k'.repeat(40));
  });
});
