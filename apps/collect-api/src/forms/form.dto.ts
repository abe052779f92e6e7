import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf, type ValidationArguments } from 'class-validator';
import { Bool, Choice, Nested, Text } from '@collect/contracts';
import { RejectUnknownFields } from '@collect/platform';
import { TITLE_CHECK, XML_TEXT_CHECK } from '../openrosa/safe-names.js';
import { JSON_FIELD_TYPES, JSON_TYPE_ALIASES, NAME_RE } from './form-definition.js';
import type { FormField } from './form.entity.js';
import { FORM_ROLES, type FormRole } from './roles.js';

const NAME_MESSAGE = 'An XML name: letters, digits, _ . - (at most 100), starting with a letter or _.';
/** Siblings need distinct names (they become sibling elements of the instance). */
const uniqueNames = {
  key: (item: unknown) => {
    const name = (item as { name?: unknown } | null)?.name;
    return typeof name === 'string' ? name : {};
  },
  // Message functions see any value: every check of a field runs, the first failure is shown.
  message: (args: ValidationArguments) => {
    const names = Array.isArray(args.value) ? args.value.map((f: { name?: unknown } | null) => f?.name) : [];
    return `Duplicate name "${String(names.find((n, i) => typeof n === 'string' && names.indexOf(n) !== i)).slice(0, 100)}".`;
  },
};

/** One question (or group, repeat) of a JSON form definition (docs/forms.md). */
export class JsonFormFieldDto {
  @Text({ required: true, pattern: NAME_RE, patternMessage: NAME_MESSAGE, check: { test: (name) => name !== 'meta', message: '"meta" holds the submission metadata; choose another name.' } })
  name: string;

  @Choice([...JSON_FIELD_TYPES, 'group', 'repeat'], {
    required: true,
    normalise: (type) => JSON_TYPE_ALIASES[type] ?? type,
    choiceMessage: (args) => `Unknown type "${String(args.value).slice(0, 100)}"; one of ${[...JSON_FIELD_TYPES, 'group', 'repeat'].join(', ')}.`,
    description: `Aliases: ${Object.entries(JSON_TYPE_ALIASES).map(([a, t]) => `${a} (${t})`).join(', ')}.`,
  })
  type: string;

  @Text({ max: 2000, check: XML_TEXT_CHECK })
  label?: string;

  /** Only groups and repeats have (and need) children. */
  @ValidateIf((f: JsonFormFieldDto) => f.type === 'group' || f.type === 'repeat')
  @Nested(() => JsonFormFieldDto, { each: true, required: true, minItems: 1, uniqueBy: uniqueNames, description: 'The questions of a group or repeat (required for those, ignored otherwise).' })
  children?: JsonFormFieldDto[];
}

/** `POST /api/v1/forms` with `application/json`: a form definition the service renders as an XForm. */
export class JsonFormDefinitionDto {
  @Text({ required: true, pattern: NAME_RE, patternMessage: NAME_MESSAGE, description: 'The form id (the instance root id attribute).' })
  id_string: string;

  @Text({ trim: true, blank: 'refuse', max: 255, check: TITLE_CHECK, description: 'Defaults to id_string.' })
  title?: string;

  @Text({ max: 100, check: TITLE_CHECK })
  version?: string;

  @Nested(() => JsonFormFieldDto, { each: true, required: true, minItems: 1, uniqueBy: uniqueNames })
  fields: JsonFormFieldDto[];
}

/** `PATCH /api/v1/forms/{pk}` (manager or owner). */
export class UpdateFormDto {
  @Text({ trim: true, blank: 'refuse', max: 255, message: 'A non-empty string of at most 255 characters.', check: TITLE_CHECK })
  title?: string;

  @Bool({ message: 'Must be true or false.', description: 'Whether the form accepts submissions.' })
  downloadable?: boolean;
}

/**
 * `PUT /api/v1/forms/{pk}/share`. Strict: a misspelt `remove` would otherwise grant the role it
 * was meant to take away (docs/security.md).
 */
@RejectUnknownFields()
export class ShareFormDto {
  @Text({ required: true, blank: 'missing' })
  username: string;

  @Choice(FORM_ROLES, { required: true, choiceMessage: `One of ${FORM_ROLES.join(', ')}.` })
  role: FormRole;

  @Bool({ fromString: true, description: 'Take the named role away instead of giving it.' })
  remove?: boolean;
}

/** The form resource's `encryption` (docs/encryption.md "Modes"). */
export class FormEncryptionSummary {
  @ApiProperty({ type: 'string', enum: ['self', 'passphrase', 'server'], description: 'A key put in the XForm itself (the XLSForm setting public_key) is a self-mode key.' })
  mode: string;

  @ApiProperty({ type: 'string', nullable: true })
  hint: string | null;

  @ApiProperty({ type: 'string', description: 'base64 SubjectPublicKeyInfo, as in base64RsaPublicKey.' })
  public_key: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'When the key was given through the API; null for a key put in the XForm itself.' })
  created_at: string | null;
}

/** A form as the API shows it (docs/api-conventions.md §Forms and submissions). */
export class FormBody {
  @ApiProperty({ type: 'string', format: 'uri' })
  url: string;

  @ApiProperty({ type: 'integer' })
  formid: number;

  @ApiProperty({ type: 'string' })
  id_string: string;

  @ApiProperty({ type: 'string' })
  title: string;

  @ApiProperty({ type: 'string', description: '32 hex characters.' })
  uuid: string;

  @ApiProperty({ type: 'string', description: "The owner's username." })
  owner: string;

  @ApiProperty({ type: 'string' })
  version: string;

  @ApiProperty({ type: 'boolean', description: 'Accepts submissions.' })
  downloadable: boolean;

  @ApiProperty({ type: 'string', format: 'date-time' })
  date_created: string;

  @ApiProperty({ type: 'string', format: 'date-time' })
  date_modified: string;

  @ApiProperty({ type: 'integer' })
  num_of_submissions: number;

  @ApiProperty({ type: 'string', nullable: true, description: 'UTC, `YYYY-MM-DDTHH:MM:SS`.' })
  last_submission_time: string | null;

  @ApiProperty({ type: 'string', enum: [...FORM_ROLES], description: "The caller's role on the form." })
  role: FormRole;

  @ApiProperty({ type: 'boolean', description: 'Whether the current version carries a public key (base64RsaPublicKey): ODK clients then encrypt every submission.' })
  encrypted: boolean;

  @ApiProperty({ type: FormEncryptionSummary, nullable: true, description: 'The key of the current version; null when it has none (docs/encryption.md). Never a private key.' })
  encryption: FormEncryptionSummary | null;
}

/** One question of a form, in form order (`GET /api/v1/forms/{pk}/fields`). */
export class FormFieldBody implements FormField {
  @ApiProperty({ type: 'string' })
  name: string;

  @ApiProperty({ type: 'string', description: 'Without the root element: `group/q`.' })
  xpath: string;

  @ApiProperty({ type: 'string', description: 'text, integer, decimal, select one, geopoint, image, audio, video, file, group, repeat, ...' })
  type: string;

  @ApiProperty({ type: 'string', nullable: true })
  label: string | null;

  @ApiPropertyOptional({ type: 'string', description: 'Inside a repeat: the xpath of the innermost repeat.' })
  repeat?: string;
}
