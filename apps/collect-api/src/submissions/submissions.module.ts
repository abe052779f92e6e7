import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { FormsModule } from '../forms/forms.module.js';
import { AttachmentEntity, SubmissionEntity } from './submission.entity.js';
import { SubmissionEvents } from './submission-events.js';

/**
 * JSON + OpenRosa intake, the data endpoints and the submission JSON builder. Exports
 * SubmissionEvents (created/updated/deleted, in-transaction hook + after-commit listeners).
 */
@Module({
  imports: [TypeOrmModule.forFeature([SubmissionEntity, AttachmentEntity]), FormsModule],
  controllers: [],
  providers: [SubmissionEvents],
  exports: [SubmissionEvents, FormsModule],
})
export class SubmissionsModule {}
