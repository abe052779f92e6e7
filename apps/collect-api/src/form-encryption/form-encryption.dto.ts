import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { Choice, Text } from '@collect/contracts';
import { RejectUnknownFields } from '@collect/platform';

export type EncryptionMode = 'self' | 'passphrase' | 'server';

/**
 * `POST /api/v1/forms/{pk}/encryption` (docs/encryption.md "Modes"). Strict: a misspelt field of
 * a request that carries key material is an error, not a silent default.
 */
@RejectUnknownFields()
export class CreateFormEncryptionDto {
  @Choice(['self', 'passphrase', 'server'], { required: true, description: '`self`: you keep the private key; `passphrase`: the platform makes the pair and seals the private key under your passphrase; `server`: sealed under the server\'s ENCRYPTION_KEK, decrypted on receipt.' })
  mode: EncryptionMode;

  @ValidateIf((dto: CreateFormEncryptionDto) => dto.mode === 'passphrase')
  @Text({ required: true, min: 10, max: 1024, description: 'passphrase mode: 10 to 1,024 characters; never stored.' })
  passphrase?: string;

  @ValidateIf((dto: CreateFormEncryptionDto) => dto.mode === 'self')
  @Text({ required: true, trim: true, blank: 'missing', max: 16_384, description: 'self mode: base64 SubjectPublicKeyInfo of an RSA key of at least 2048 bits (PEM is read too).' })
  public_key?: string;

  @Text({ trim: true, blank: 'missing', max: 255, description: 'A reminder of where the private key or passphrase is kept; shown to everyone who can see the form.' })
  hint?: string;
}

/** The form's `encryption` object. Never a private key. */
export class FormEncryptionBody {
  @ApiProperty({ enum: ['self', 'passphrase', 'server'] })
  mode: EncryptionMode;

  @ApiPropertyOptional({ type: 'string', nullable: true })
  hint: string | null;

  @ApiProperty({ description: 'base64 SubjectPublicKeyInfo, as in the XForm\'s base64RsaPublicKey.' })
  public_key: string;

  @ApiProperty({ description: 'The form version that first carried this key.' })
  version: string;

  @ApiProperty({ type: 'string', format: 'date-time' })
  created_at: string;
}
