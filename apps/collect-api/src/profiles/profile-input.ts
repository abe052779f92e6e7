import { FieldValidationError } from '@collect/contracts';
import type { CreateUserInput } from '../users/users.service.js';

const USERNAME = /^[A-Za-z0-9_.@+-]{3,150}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Checks a registration body and maps it to a new user; every bad field is reported at once
 * as `{"<field>": ["message"]}` (decisions.md §Errors).
 */
export function parseRegistration(body: unknown): CreateUserInput & { password: string } {
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new FieldValidationError({ non_field_errors: ['Expected a JSON object.'] });
  const b = body as Record<string, unknown>;
  const errors: Record<string, string[]> = {};
  const str = (field: string, max: number, required = false): string => {
    const v = b[field];
    if (v === undefined || v === null || v === '') {
      if (required) errors[field] = ['This field is required.'];
      return '';
    }
    if (typeof v !== 'string') {
      errors[field] = ['Not a valid string.'];
      return '';
    }
    if (v.length > max) errors[field] = [`Ensure this field has no more than ${max} characters.`];
    return v.trim();
  };

  const username = str('username', 150, true);
  if (username && !errors.username && !USERNAME.test(username)) {
    errors.username = ['Enter a valid username: 3 to 150 letters, digits and @/./+/-/_ only.'];
  }
  const password = typeof b.password === 'string' ? b.password : '';
  if (!password) errors.password = ['This field is required.'];
  else if (password.length < 8) errors.password = ['This password is too short. It must contain at least 8 characters.'];
  else if (password.length > 1024) errors.password = ['Ensure this field has no more than 1024 characters.'];
  else if (password.toLowerCase() === username.toLowerCase()) errors.password = ['The password is too similar to the username.'];
  const email = str('email', 254, true);
  if (email && !errors.email && !EMAIL.test(email)) errors.email = ['Enter a valid email address.'];
  const country = str('country', 2).toUpperCase();
  if (country && !/^[A-Z]{2}$/.test(country)) errors.country = ['Enter a two-letter country code.'];
  const website = str('website', 255);
  if (website && !errors.website && !/^https?:\/\/\S+$/i.test(website)) errors.website = ['Enter a valid URL.'];
  const requireAuth = b.require_auth;
  if (requireAuth !== undefined && typeof requireAuth !== 'boolean') errors.require_auth = ['Must be a valid boolean.'];
  const input = {
    username,
    password,
    email,
    firstName: str('first_name', 150),
    lastName: str('last_name', 150),
    city: str('city', 255),
    country,
    organization: str('organization', 255),
    website,
    twitter: str('twitter', 255),
    requireAuth: requireAuth === true,
  };
  if (Object.keys(errors).length) throw new FieldValidationError(errors);
  return input;
}
