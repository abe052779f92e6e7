import { SecretLedger } from './secret-ledger.js';

describe('SecretLedger', () => {
  it('finds every line holding a recorded secret, and only those', () => {
    const ledger = new SecretLedger();
    const token = ledger.keep('api token', 'a1b2c3d4e5f6a7b8');
    ledger.keep('password', 'correct horse battery');
    const lines = ['{"msg":"ok"}', `{"msg":"auth","authorization":"Token ${token}"}`, '{"msg":"login","user":"correct horse"}'];
    expect(ledger.leaks(lines, 'svc')).toEqual([`api token (svc): ${lines[1]}`]);
    expect(ledger.get('password')).toBe('correct horse battery');
    expect(ledger.size).toBe(2);
  });

  it('refuses values too short or not strings to prove anything', () => {
    const ledger = new SecretLedger();
    expect(() => ledger.keep('pin', '1234')).toThrow(/shorter than 8/);
    expect(() => ledger.keep('missing', undefined)).toThrow(/not a string/);
    expect(() => ledger.get('unknown')).toThrow(/no secret named unknown/);
  });
});
