import { ApiProperty } from '@nestjs/swagger';
import { Check, Choice, Int, IntList, MAX_DB_ID, Nested, Text, TextList } from '@collect/contracts';
import type { DataviewFilter } from './dataset.entities.js';
import { DATAVIEW_COLUMN, DATAVIEW_OPERATORS } from './dataview-query.js';

const NAME = { trim: true, blank: 'refuse', max: 255, message: 'A non-empty string of at most 255 characters.' } as const;
const COLUMNS = 'A non-empty list of field names (xpaths).';
const QUERY = 'Must be a list of {column, filter, value, condition?}.';

/** `POST /api/v1/merged-datasets` (docs/api-conventions.md §Forms and submissions). */
export class CreateMergedDatasetDto {
  @Text({ ...NAME, required: true })
  name: string;

  // The configured cap (MERGED_DATASET_MAX_FORMS) is checked by the service; this is its largest value.
  @IntList({ required: true, minItems: 2, maxItems: 10_000, unique: true, min: 1, max: MAX_DB_ID, message: 'A list of at least two different form ids.', description: 'Forms the caller can see; at most MERGED_DATASET_MAX_FORMS of them (100 unless configured).' })
  xforms: number[];

  @Text({ ...NAME, nullable: true })
  project?: string | null;
}

/** One filter of a dataview: answers of `column` compared with `value`. */
export class DataviewFilterDto implements DataviewFilter {
  @Text({ required: true, pattern: DATAVIEW_COLUMN, message: 'A field name or xpath.' })
  column: string;

  @Choice(DATAVIEW_OPERATORS, { required: true, choiceMessage: `One of ${DATAVIEW_OPERATORS.join(' ')}.` })
  filter: DataviewFilter['filter'];

  @Check((v) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)), { message: 'A string or a number.' })
  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'number' }], description: 'Compared as numbers when both sides are numbers, as text otherwise.' })
  value: string | number;

  @Choice(['and', 'or'], { choiceMessage: '"and" or "or".', description: 'Filters with "or" are ORed together, the group ANDed with the rest.' })
  condition?: 'and' | 'or';
}

/** `POST /api/v1/dataviews` (editor on the form). Lists may come as JSON text (form posts). */
export class CreateDataviewDto {
  @Text({ ...NAME, required: true })
  name: string;

  @Int({ required: true, min: 1, max: MAX_DB_ID, requiredMessage: 'A form id.', message: 'A form id.' })
  xform: number;

  @TextList({ required: true, fromJsonText: true, minItems: 1, pattern: DATAVIEW_COLUMN, message: COLUMNS })
  columns: string[];

  @Nested(() => DataviewFilterDto, { each: true, fromJsonText: true, maxItems: 50, message: QUERY })
  query?: DataviewFilterDto[];

  @Text({ ...NAME, nullable: true })
  project?: string | null;
}

/** `PATCH /api/v1/dataviews/{pk}`: any of the fields; the form of a dataview cannot change. */
export class UpdateDataviewDto {
  @Text(NAME)
  name?: string;

  @Int({ min: 1, max: MAX_DB_ID, message: 'A form id.', description: 'Only its current form is accepted.' })
  xform?: number;

  @TextList({ fromJsonText: true, minItems: 1, pattern: DATAVIEW_COLUMN, message: COLUMNS })
  columns?: string[];

  @Nested(() => DataviewFilterDto, { each: true, fromJsonText: true, maxItems: 50, message: QUERY })
  query?: DataviewFilterDto[];

  @Text({ ...NAME, nullable: true })
  project?: string | null;
}

/** `GET /api/v1/dataviews?xform=`. */
export class DataviewListQueryDto {
  @Text({ description: 'Only the dataviews of this form.' })
  xform?: string;
}

/** A form of a merged dataset. */
export class MergedFormBody {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'string' })
  id_string: string;

  @ApiProperty({ type: 'string' })
  title: string;
}

/** A merged dataset: several forms seen as one. */
export class MergedDatasetBody {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'string', format: 'uri' })
  url: string;

  @ApiProperty({ type: 'string' })
  name: string;

  @ApiProperty({ type: 'string', nullable: true })
  project: string | null;

  @ApiProperty({ type: () => MergedFormBody, isArray: true, description: 'Live forms only.' })
  xforms: MergedFormBody[];

  @ApiProperty({ type: 'integer' })
  num_of_submissions: number;

  @ApiProperty({ type: 'string', format: 'date-time' })
  date_created: string;
}

/** A dataview: a form's submissions filtered by a query, projected to columns. */
export class DataviewBody {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'integer', description: 'Same as id (the DRF name).' })
  dataviewid: number;

  @ApiProperty({ type: 'string', format: 'uri' })
  url: string;

  @ApiProperty({ type: 'string' })
  name: string;

  @ApiProperty({ type: 'integer' })
  xform: number;

  @ApiProperty({ type: 'string', nullable: true })
  project: string | null;

  @ApiProperty({ type: 'string', isArray: true })
  columns: string[];

  @ApiProperty({ type: () => DataviewFilterDto, isArray: true })
  query: DataviewFilter[];

  @ApiProperty({ type: 'integer', description: 'Submissions the query selects.' })
  count: number;

  @ApiProperty({ type: 'string', format: 'date-time' })
  date_created: string;

  @ApiProperty({ type: 'string', format: 'date-time' })
  date_modified: string;
}

