import { ApiProperty } from '@nestjs/swagger';
import { Bool, IntList, MAX_DB_ID, Text } from '@collect/contracts';

/** An ISO 8601 date or date-time (`2026-11-01`, `2026-11-01T10:00:00Z`). */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;
const isoDate = (description: string) =>
  Text({
    max: 40,
    pattern: ISO_DATE,
    patternMessage: 'Enter an ISO 8601 date or date-time, such as 2026-11-01 or 2026-11-01T10:00:00Z.',
    check: { test: (v) => !Number.isNaN(Date.parse(v)), message: 'Enter a valid date.' },
    format: 'date-time',
    description,
  });

/** `POST /api/v1/restservices/{pk}/replay` (docs/api-conventions.md §Rest services). */
export class ReplayDto {
  @isoDate('Only submissions received (entities created) at or after this time (a date alone is midnight UTC).')
  submitted_after?: string;

  @isoDate('Only submissions received (entities created) before this time.')
  submitted_before?: string;

  @IntList({ minItems: 1, maxItems: 10_000, unique: true, min: 1, max: MAX_DB_ID, description: 'Only these submissions (`_id`), and the entities they created.' })
  submission_ids?: number[];

  @Bool({ message: 'Must be a boolean.', description: 'Only submissions (entities) whose delivery to this service failed and never succeeded.' })
  only_failed?: boolean;

  @Bool({ message: 'Must be a boolean.', description: 'Answer the number of submissions and entities it would send, send nothing.' })
  dry_run?: boolean;
}

/** 200 to a dry run. */
export class ReplayCount {
  @ApiProperty({ type: 'integer' })
  count: number;
}

/** A replay and its progress. */
export class ReplayBody {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'string', enum: ['queued', 'running', 'done', 'cancelled'] })
  status: string;

  @ApiProperty({ type: 'integer', description: 'Submissions and entities it sends.' })
  total: number;

  @ApiProperty({ type: 'integer', description: 'Delivered (or skipped: deleted before sending).' })
  done: number;

  @ApiProperty({ type: 'integer', description: 'Failed for good.' })
  failed: number;

  @ApiProperty({ type: 'string', format: 'date-time' })
  created_at: string;
}
