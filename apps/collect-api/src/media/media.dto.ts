import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** An attachment as the media API lists it (spec §2.3, docs/media.md "Fields and URL formats"). */
export class MediaJson {
  @ApiProperty({ type: 'integer' })
  id: number;

  @ApiProperty({ type: 'string', format: 'uri', description: 'The record: `/api/v1/media/{id}`.' })
  url: string;

  @ApiProperty({ type: 'string' })
  filename: string;

  @ApiProperty({ type: 'string' })
  mimetype: string;

  @ApiProperty({ type: 'integer', description: 'The form.' })
  xform: number;

  @ApiProperty({ type: 'integer', description: 'The submission.' })
  instance: number;

  @ApiProperty({ type: 'string', format: 'uri' })
  download_url: string;

  @ApiProperty({ type: 'string', format: 'uri', description: 'Longest side 240 px (images; others: the original).' })
  small_download_url: string;

  @ApiProperty({ type: 'string', format: 'uri', description: 'Longest side 640 px (images; others: the original).' })
  medium_download_url: string;

  @ApiPropertyOptional({ type: 'string', nullable: true, description: 'In listings by merged dataset, dataview or type: the question, without the root element.' })
  field_xpath?: string | null;
}

/** `GET /api/v1/media/count`. */
export class MediaCount {
  @ApiProperty({ type: 'integer' })
  count: number;
}
