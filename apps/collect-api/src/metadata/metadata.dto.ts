import { ApiProperty } from '@nestjs/swagger';
import { Choice, Int, MAX_DB_ID, Text } from '@collect/contracts';
import { hasUnsafeNameCharacter, UNSAFE_NAME_MESSAGE } from '../openrosa/safe-names.js';

/** A media file name: what the form refers to (`jr://images/<name>`); no folders, no control characters. */
const FILE_NAME = /^(?!\.\.?$)[^/\\\x00-\x1f\x7f]{1,255}$/;
const FILE_NAME_MESSAGE = 'A file name (no "/" or "\\", at most 255 characters).';

/**
 * The file-name rule, for whichever name is used: `data_value`, or else the upload's own file
 * name (a `filename*=UTF-8''%01ctl.csv` part must meet the same rule; the manifest lists it).
 * Also no character hasUnsafeNameCharacter refuses. Null when the name is fine.
 */
export function mediaNameProblem(name: string): string | null {
  if (!FILE_NAME.test(name)) return FILE_NAME_MESSAGE;
  return hasUnsafeNameCharacter(name) ? UNSAFE_NAME_MESSAGE : null;
}

/** The fields of `POST /api/v1/metadata` (multipart, beside the `data_file` part). */
export class CreateMetadataDto {
  @Int({ required: true, min: 1, max: MAX_DB_ID, requiredMessage: 'A form id.', message: 'A form id.', description: 'The form.' })
  xform: number;

  @Choice(['media'], { required: true, choiceMessage: 'Only "media" is supported.', description: 'Only `media` (form media: images, audio, CSV/XML lookups).' })
  data_type: string;

  @Text({
    blank: 'missing', max: 255, pattern: FILE_NAME, patternMessage: FILE_NAME_MESSAGE, check: { test: (v) => !hasUnsafeNameCharacter(v), message: UNSAFE_NAME_MESSAGE },
    description: "The file name the form refers to; defaults to data_file's name. No control characters, bidirectional controls or characters XML cannot hold.",
  })
  data_value?: string;
}

/** `GET /api/v1/metadata?xform=`. */
export class MetadataQueryDto {
  @Int({ min: 1, max: MAX_DB_ID, message: 'A form id.', description: 'Only this form’s files (otherwise those of every form the caller sees).' })
  xform?: number;
}

/** A form media record (docs/forms.md, "Form media and the OpenRosa manifest"). */
export class MetadataBody {
  @ApiProperty({ type: 'integer', description: 'Also the `<media id>` of `xformsMedia`.' })
  id: number;

  @ApiProperty({ type: 'string', format: 'uri' })
  url: string;

  @ApiProperty({ type: 'integer' })
  xform: number;

  @ApiProperty({ type: 'string', enum: ['media'] })
  data_type: string;

  @ApiProperty({ type: 'string', description: 'The file name.' })
  data_value: string;

  @ApiProperty({ type: 'string', description: 'The stored file name (the same as data_value).' })
  data_file: string;

  @ApiProperty({ type: 'string', description: 'Its content type, sniffed from the bytes and the name.' })
  data_file_type: string;

  @ApiProperty({ type: 'string', description: '`md5:<hex>`, as the OpenRosa manifest lists it.' })
  file_hash: string;

  @ApiProperty({ type: 'integer' })
  size: number;

  @ApiProperty({ type: 'string', format: 'uri', description: 'The download: `/xformsMedia/{xform}/{id}`.' })
  media_url: string;

  @ApiProperty({ type: 'string', format: 'date-time' })
  date_created: string;
}
