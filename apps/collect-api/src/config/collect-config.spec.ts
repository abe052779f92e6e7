import { ConfigError } from '@collect/platform';
import { loadCollectConfig } from './collect-config.js';

describe('collect-api configuration', () => {
  it('applies documented defaults', () => {
    const sut = loadCollectConfig({});
    expect(sut.COLLECT_PORT).toBe(3000);
    expect(sut.PUBLIC_BASE_URL).toBe('http://localhost:3000');
    expect(sut.MIGRATIONS_RUN).toBe(true);
  });

  it.each([['abc'], ['0'], ['70000'], ['-1'], ['3000.5']])('rejects COLLECT_PORT=%s naming the variable', (value) => {
    expect(() => loadCollectConfig({ COLLECT_PORT: value })).toThrow(ConfigError);
    expect(() => loadCollectConfig({ COLLECT_PORT: value })).toThrow(/COLLECT_PORT/);
  });

  it('lists every bad variable at once and never echoes a URL that may hold a password', () => {
    let error: ConfigError | undefined;
    try {
      loadCollectConfig({ COLLECT_PORT: 'x', DATABASE_URL: 'mysql://u:secret@h/db', MIGRATIONS_RUN: 'maybe' });
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error?.problems.map((p) => p.split(':')[0]).sort()).toEqual(['COLLECT_PORT', 'DATABASE_URL', 'MIGRATIONS_RUN']);
    expect(error?.message).not.toContain('secret');
  });

  it('derives PUBLIC_BASE_URL from the port and trims a trailing slash', () => {
    expect(loadCollectConfig({ COLLECT_PORT: '3100' }).PUBLIC_BASE_URL).toBe('http://localhost:3100');
    expect(loadCollectConfig({ PUBLIC_BASE_URL: 'https://collect.example.org/' }).PUBLIC_BASE_URL).toBe('https://collect.example.org');
  });
});
