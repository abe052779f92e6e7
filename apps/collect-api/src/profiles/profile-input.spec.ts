import { FieldValidationError } from '@collect/contracts';
import { parseRegistration } from './profile-input.js';

function errorsOf(body: unknown): Record<string, string[]> {
  try {
    parseRegistration(body);
  } catch (err) {
    if (err instanceof FieldValidationError) return err.getResponse() as Record<string, string[]>;
    throw err;
  }
  throw new Error('expected a FieldValidationError');
}

describe('parseRegistration', () => {
  it('maps a valid body to a new user', () => {
    expect(parseRegistration({ username: 'ann', password: 'long enough', email: 'a@b.org', first_name: ' Ann ', country: 'ug' })).toMatchObject({
      username: 'ann',
      firstName: 'Ann',
      country: 'UG',
      requireAuth: false,
    });
  });

  it('reports every bad field at once', () => {
    expect(Object.keys(errorsOf({ username: 'x', password: '1', email: 'no' })).sort()).toEqual(['email', 'password', 'username']);
    expect(errorsOf({ username: 'a'.repeat(151), password: 'long enough', email: 'a@b.org' }).username).toBeDefined();
    expect(errorsOf('text')).toEqual({ non_field_errors: ['Expected a JSON object.'] });
    expect(errorsOf({ username: 'ann', password: 'long enough', email: 'a@b.org', first_name: 5 })).toEqual({ first_name: ['Not a valid string.'] });
  });
});
