import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ValidateIf } from 'class-validator';
import { AnyObject, Bool, Check, Int, IntList, MAX_DB_ID, Text } from '@collect/contracts';
import { RejectUnknownFields } from '@collect/platform';

/** Items of one bulk create, and of one bulk delete, at most (docs/entities.md "Limits"). */
export const MAX_BULK = 10_000;
export const DEFAULT_PAGE_SIZE = 1000;
export const MAX_PAGE_SIZE = 10_000;

@RejectUnknownFields()
export class CreateEntityListDto {
  @Text({ required: true, trim: true, blank: 'refuse', max: 255, description: 'No ".", not starting with "__", unique among the owner\'s lists.' })
  name: string;
}

/** `page`, `page_size` (docs/entities.md "Limits"): without `page`, at most 1,000 items. */
export class EntityPageQueryDto {
  @Int({ min: 1, max: 999_999_999, blankIsMissing: true })
  page?: number;

  @Int({ min: 1, max: 999_999_999, blankIsMissing: true, description: `At most ${MAX_PAGE_SIZE} (larger values count as ${MAX_PAGE_SIZE}); without page at most ${DEFAULT_PAGE_SIZE}.` })
  page_size?: number;
}

export function pageWindow(query: EntityPageQueryDto): { page: number; pageSize: number; offset: number } {
  const page = query.page ?? 1;
  const pageSize = query.page === undefined ? Math.min(query.page_size ?? DEFAULT_PAGE_SIZE, DEFAULT_PAGE_SIZE) : Math.min(query.page_size ?? DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
  return { page, pageSize, offset: (page - 1) * pageSize };
}

export class EntityListingQueryDto extends EntityPageQueryDto {
  @Text({ max: 255, blank: 'missing', description: 'Case-insensitive text found in the label or any value (taken literally).' })
  search?: string;

  @Bool({ fromString: true, description: 'Only the deleted entities, each with deleted_at.' })
  deleted?: boolean;
}

export class PatchEntityQueryDto {
  @Int({ min: 1, max: MAX_DB_ID, blankIsMissing: true, description: 'The version the change was made from: another current version is a 409 unless force=true.' })
  base_version?: number;

  @Bool({ fromString: true })
  force?: boolean;

  @Bool({ fromString: true, description: 'Clears the entity\'s conflict (with or without changes).' })
  resolve?: boolean;
}

@RejectUnknownFields()
export class PatchEntityDto {
  @Text({ nullable: true, max: 10_000 })
  label?: string | null;

  @AnyObject({ nullable: true, description: 'Properties to set (strings); "" or null unsets one.' })
  data?: Record<string, unknown> | null;
}

/**
 * One entity (`uuid`?, `label`, `data`) or `{"entities": [...]}` (docs/entities.md "API"). The
 * items are checked one by one by the service, so the 400 names the first bad one.
 */
@RejectUnknownFields()
export class CreateEntitiesDto {
  @Text({ max: 100 })
  uuid?: string;

  @Text({ max: 10_000 })
  label?: string;

  @AnyObject()
  data?: Record<string, unknown>;

  @ValidateIf((_dto: object, v: unknown) => v !== undefined)
  @Check((v) => Array.isArray(v) && v.length >= 1 && v.length <= MAX_BULK, { message: `A list of 1 to ${MAX_BULK} entities.` })
  @ApiPropertyOptional({ type: 'array', items: { type: 'object' }, maxItems: MAX_BULK })
  entities?: unknown[];
}

@RejectUnknownFields()
export class DeleteEntitiesDto {
  @IntList({ required: true, minItems: 1, maxItems: MAX_BULK, min: 1, max: Number.MAX_SAFE_INTEGER })
  entity_ids: number[];
}

export class EntityFormRef {
  @ApiProperty() title: string;
  @ApiProperty({ description: 'The form\'s URL.' }) xform: string;
  @ApiProperty() id_string: string;
}

export class RegistrationFormRef extends EntityFormRef {
  @ApiProperty({ type: [String] }) save_to: string[];
}

export class EntityListBody {
  @ApiProperty() url: string;
  @ApiProperty() id: number;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'The owner\'s username.' }) owner: string;
  @ApiProperty() public: boolean;
  @ApiProperty({ format: 'date-time' }) date_created: string;
  @ApiProperty({ format: 'date-time' }) date_modified: string;
  @ApiProperty() num_registration_forms: number;
  @ApiProperty() num_follow_up_forms: number;
  @ApiProperty() num_entities: number;
}

export class EntityListDetailBody extends EntityListBody {
  @ApiProperty({ type: [String] }) properties: string[];
  @ApiProperty({ type: [RegistrationFormRef] }) registration_forms: RegistrationFormRef[];
  @ApiProperty({ type: [EntityFormRef] }) follow_up_forms: EntityFormRef[];
}

export class EntityBody {
  @ApiProperty() url: string;
  @ApiProperty() id: number;
  @ApiProperty() uuid: string;
  @ApiProperty({ format: 'date-time' }) date_created: string;
  @ApiProperty({ format: 'date-time' }) date_modified: string;
  @ApiProperty() version: number;
  @ApiPropertyOptional({ enum: ['soft', 'hard'], nullable: true }) conflict: 'soft' | 'hard' | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'The `_id` of the submission that created it.' }) creator_submission: number | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, description: 'The properties and `label`.' }) data: Record<string, string>;
  @ApiPropertyOptional({ format: 'date-time' }) deleted_at?: string;
}

export class BulkCreatedBody {
  @ApiProperty() created: number;
}
