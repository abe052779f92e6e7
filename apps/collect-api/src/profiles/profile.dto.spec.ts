import { HttpException } from '@nestjs/common';
import { validateInput } from '@collect/platform';
import { RegisterProfileDto, registrationInput } from './profile.dto.js';

async function errorsOf(body: unknown): Promise<Record<string, string[]>> {
  try {
    await validateInput(RegisterProfileDto, body);
  } catch (err) {
    if (err instanceof HttpException && err.getStatus() === 400) return err.getResponse() as Record<string, string[]>;
    throw err;
  }
  throw new Error('expected a 400');
}

describe('RegisterProfileDto', () => {
  it('maps a valid body to a new user', async () => {
    const dto = await validateInput(RegisterProfileDto, { username: 'ann', password: 'long enough', email: 'a@b.org', first_name: ' Ann ', country: 'ug', is_superuser: true });
    expect(registrationInput(dto)).toMatchObject({ username: 'ann', firstName: 'Ann', country: 'UG', requireAuth: false });
    expect(registrationInput(dto)).not.toHaveProperty('isSuperuser');
  });

  it('reports every bad field at once', async () => {
    expect(Object.keys(await errorsOf({ username: 'x', password: '1', email: 'no' })).sort()).toEqual(['email', 'password', 'username']);
    expect((await errorsOf({ username: 'a'.repeat(151), password: 'long enough', email: 'a@b.org' })).username).toBeDefined();
    expect(await errorsOf('text')).toEqual({ detail: 'Expected a JSON object.' });
    expect(await errorsOf({ username: 'ann', password: 'long enough', email: 'a@b.org', first_name: 5 })).toEqual({ first_name: ['Not a valid string.'] });
    expect(await errorsOf({ username: 'samesame', password: 'SameSame', email: 's@example.org' })).toEqual({ password: ['The password is too similar to the username.'] });
  });
});
