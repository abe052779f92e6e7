import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { FormsModule } from '../forms/forms.module.js';
import { EntitiesModule } from '../entities/entities.module.js';
import { AttachmentEntity, SubmissionEntity } from './submission.entity.js';
import { SubmissionEvents } from './submission-events.js';
import { SubmissionsRepository } from './submissions.repository.js';
import { SubmissionAttachmentStore } from './submission-attachments.js';
import { SubmissionFormResolver } from './submission-form-resolver.js';
import { SubmissionsService } from './submissions.service.js';
import { SubmissionDataRepository } from './submission-data.repository.js';
import { DataPageCache } from './data-page-cache.js';
import { SubmissionDataService } from './submission-data.service.js';
import { DataController } from './data.controller.js';
import { SubmissionController } from './submission.controller.js';

/**
 * JSON + OpenRosa intake, the data endpoints and the submission JSON builder. Exports
 * SubmissionEvents (created/updated/deleted, in-transaction hook + after-commit listeners).
 */
@Module({
  imports: [TypeOrmModule.forFeature([SubmissionEntity, AttachmentEntity]), FormsModule, EntitiesModule],
  controllers: [SubmissionController, DataController],
  providers: [SubmissionEvents, SubmissionsRepository, SubmissionsService, SubmissionAttachmentStore, SubmissionFormResolver, SubmissionDataRepository, SubmissionDataService, DataPageCache],
  exports: [SubmissionEvents, SubmissionsService, SubmissionsRepository, SubmissionDataRepository, SubmissionDataService, FormsModule],
})
export class SubmissionsModule {}
