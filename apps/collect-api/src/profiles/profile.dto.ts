import { Bool, Text } from '@collect/contracts';
import type { CreateUserInput } from '../users/users.service.js';

const USERNAME = /^[A-Za-z0-9_.@+-]{3,150}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** `POST /api/v1/profiles` (open registration). Unknown fields are dropped, as DRF does. */
export class RegisterProfileDto {
  @Text({ required: true, trim: true, blank: 'missing', max: 150, pattern: USERNAME, patternMessage: 'Enter a valid username: 3 to 150 letters, digits and @/./+/-/_ only.' })
  username: string;

  @Text({
    required: true,
    blank: 'missing',
    min: 8,
    max: 1024,
    check: { test: (password, dto) => password.toLowerCase() !== String((dto as RegisterProfileDto).username ?? '').toLowerCase(), message: 'The password is too similar to the username.' },
    description: 'At least 8 characters; stored as an argon2id hash.',
  })
  password: string;

  @Text({ required: true, trim: true, blank: 'missing', max: 254, pattern: EMAIL, patternMessage: 'Enter a valid email address.', format: 'email' })
  email: string;

  @Text({ trim: true, max: 150 })
  first_name?: string;

  @Text({ trim: true, max: 150 })
  last_name?: string;

  @Text({ trim: true, max: 255 })
  city?: string;

  @Text({ trim: true, blank: 'missing', pattern: /^[A-Za-z]{2}$/, patternMessage: 'Enter a two-letter country code.', description: 'ISO 3166-1 alpha-2, stored upper-case.' })
  country?: string;

  @Text({ trim: true, max: 255 })
  organization?: string;

  @Text({ trim: true, blank: 'missing', max: 255, pattern: /^https?:\/\/\S+$/i, patternMessage: 'Enter a valid URL.', format: 'uri' })
  website?: string;

  @Text({ trim: true, max: 255 })
  twitter?: string;

  @Bool()
  require_auth?: boolean;
}

/** The account a registration creates. */
export function registrationInput(dto: RegisterProfileDto): CreateUserInput & { password: string } {
  return {
    username: dto.username,
    password: dto.password,
    email: dto.email,
    firstName: dto.first_name ?? '',
    lastName: dto.last_name ?? '',
    city: dto.city ?? '',
    country: (dto.country ?? '').toUpperCase(),
    organization: dto.organization ?? '',
    website: dto.website ?? '',
    twitter: dto.twitter ?? '',
    requireAuth: dto.require_auth === true,
  };
}
