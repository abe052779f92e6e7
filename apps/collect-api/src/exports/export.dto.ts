import { ApiProperty } from '@nestjs/swagger';
import { Bool, Choice, FieldValidationError, Int, MAX_DB_ID, Text } from '@collect/contracts';
import { MediaFilterQueryDto } from '../media/media-query.js';
import type { ExportOptions } from './export-columns.js';

/** Query options of the CSV and XLSX exports (docs/exports.md). */
export class ExportQueryDto {
  @Bool({ fromString: true, description: '`true`: one 0/1 column per choice of a select-multiple question (`q/choice`).' })
  split_select_multiples?: boolean;

  @Bool({ fromString: true, description: '`true`: a second header row with the labels.' })
  include_labels?: boolean;

  @Choice(['/', '.'], { choiceMessage: 'One of "/" or ".".', description: 'Joins group and repeat names in headers (default `/`).' })
  group_delimiter?: '/' | '.';

  @Bool({ fromString: true, description: '`true`: headers without the names of the groups around a question.' })
  remove_group_name?: boolean;

  @Bool({ fromString: true, description: "CSV: `'` before a cell that a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR; cells of numbers only, such as geopoints, excepted). Default `true`; `false` writes the stored text as it is." })
  escape_formulas?: boolean;
}

/** Query options of an entity list's CSV (docs/entities.md, "Exports of a list"). */
export class EntityListExportQueryDto {
  @Bool({ fromString: true, description: "`'` before a cell that a spreadsheet would run as a formula (as the submission CSV). Default `true`; `false` writes the values as stored, as follow-up forms get them." })
  escape_formulas?: boolean;
}

export function exportOptions(q: ExportQueryDto): ExportOptions {
  return {
    splitSelectMultiples: q.split_select_multiples ?? false,
    includeLabels: q.include_labels ?? false,
    groupDelimiter: q.group_delimiter ?? '/',
    removeGroupName: q.remove_group_name ?? false,
    escapeFormulas: q.escape_formulas ?? true,
  };
}

/** `POST /api/v1/export`: of a form (`xform`) or of an entity list (`entity_list`), one of them. */
export class CreateExportDto extends ExportQueryDto {
  @Int({ fromString: false, min: 1, max: MAX_DB_ID, message: 'A form id.', description: 'The form (or `entity_list`).' })
  xform?: number;

  @Int({ fromString: false, min: 1, max: MAX_DB_ID, message: 'An entity list id.', description: 'The entity list (or `xform`): its live entities as the list\'s CSV or XLSX (docs/entities.md, "Exports of a list").' })
  entity_list?: number;

  @Choice(['csv', 'xlsx', 'zip'], { required: true, choiceMessage: 'One of csv, xlsx, zip.', description: '`zip`: the media archive of the form (not for an entity list).' })
  format: 'csv' | 'xlsx' | 'zip';
}

/** What `POST /api/v1/export` exports: exactly one of `xform` and `entity_list` (400 naming the field otherwise). */
export function exportSubject(body: CreateExportDto): { formId: number } | { entityListId: number } {
  if (body.xform !== undefined && body.entity_list !== undefined) throw new FieldValidationError({ entity_list: ['Either xform or entity_list, not both.'] });
  if (body.entity_list !== undefined) {
    if (body.format === 'zip') throw new FieldValidationError({ format: ['An entity list exports as csv or xlsx.'] });
    return { entityListId: body.entity_list };
  }
  if (body.xform === undefined) throw new FieldValidationError({ xform: ['A form id.'] });
  return { formId: body.xform };
}

/** The state of an asynchronous export. */
export class ExportJobDto {
  @ApiProperty({ type: 'string', format: 'uuid' })
  id: string;

  @ApiProperty({ type: 'string', enum: ['pending', 'running', 'done', 'failed'] })
  status: string;

  @ApiProperty({ type: 'number', minimum: 0, maximum: 1 })
  progress: number;

  @ApiProperty({ type: 'string', format: 'uri', nullable: true, description: 'When done: the file (the requester only).' })
  download_url: string | null;

  @ApiProperty({ type: 'string', format: 'date-time' })
  expires_at: string;

  @ApiProperty({ type: 'string', nullable: true })
  error: string | null;
}

const TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})?)?$/;
const TIME_MESSAGE = 'A time as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS (UTC unless an offset is given).';

/** `GET /api/v1/media.zip`: the media listing's filters and a submission time range. */
export class MediaArchiveQueryDto extends MediaFilterQueryDto {
  @Text({ pattern: TIME, message: TIME_MESSAGE, description: 'Files of submissions received at or after this time.' })
  submitted_after?: string;

  @Text({ pattern: TIME, message: TIME_MESSAGE, description: 'Files of submissions received before this time.' })
  submitted_before?: string;
}

/** A checked time parameter as a Date; a calendar-invalid one (2026-02-31) is a 400 naming it. */
export function archiveTime(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(/[zZ]|[+-]\d{2}:\d{2}$/.test(value) || value.length === 10 ? value : `${value}Z`);
  if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value.slice(0, 10) && !/[+-]\d{2}:\d{2}$/.test(value)) {
    throw new FieldValidationError({ [name]: [TIME_MESSAGE] });
  }
  return d;
}
