import { Module } from '@nestjs/common';
import { FormsModule } from '../forms/forms.module.js';
import { EntityAttachmentsController } from './entity-attachments.controller.js';
import { EntityAttachmentsService } from './entity-attachments.service.js';
import { EntityListAttachmentsRepository } from './entity-list-attachments.repository.js';

/**
 * Entity lists as generated files: the follow-up forms' list attachments (manifest entries and
 * downloads) and the list CSV writer the exports use (docs/entities.md, "Follow-up forms and
 * their list attachment").
 */
@Module({
  imports: [FormsModule],
  controllers: [EntityAttachmentsController],
  providers: [EntityAttachmentsService, EntityListAttachmentsRepository],
  exports: [EntityAttachmentsService, EntityListAttachmentsRepository],
})
export class EntityAttachmentsModule {}
