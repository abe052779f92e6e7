import { ValidateIf } from 'class-validator';
import { Choice, Text } from '@collect/contracts';
import { RejectUnknownFields } from '@collect/platform';
import { ExportQueryDto } from '../exports/export.dto.js';

export type DecryptFormat = 'csv' | 'xlsx' | 'zip' | 'json';

/**
 * `POST /api/v1/forms/{pk}/decrypt` (docs/encryption.md "Decrypting without a server-held key"):
 * the passphrase or the private key, the format, and the options of the CSV and XLSX exports.
 * Strict: a misspelt field of a request that carries key material is an error, not a default.
 */
@RejectUnknownFields()
export class DecryptExportDto extends ExportQueryDto {
  @ValidateIf((dto: DecryptExportDto) => dto.private_key === undefined)
  @Text({ required: true, min: 10, max: 1024, description: 'passphrase mode: the passphrase the key was sealed under; never stored or logged.' })
  passphrase?: string;

  @ValidateIf((dto: DecryptExportDto) => dto.passphrase === undefined)
  @Text({ required: true, max: 16_384, description: 'self mode: the RSA private key, PEM (PKCS#8 or PKCS#1); never stored or logged.' })
  private_key?: string;

  @Choice(['csv', 'xlsx', 'zip', 'json'], { required: true, choiceMessage: 'One of csv, xlsx, zip, json.', description: '`zip`: the decrypted media as `<instance uuid>/<file>` plus `submissions.csv` and `decryption-report.csv`.' })
  format: DecryptFormat;
}
