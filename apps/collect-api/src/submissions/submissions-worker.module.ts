import { Module } from '@nestjs/common';
import { SubmissionCountFolder } from './submission-count-folder.js';
import { SubmissionDataRepository } from './submission-data.repository.js';

/**
 * The background side of submissions, for the worker composition: folding the kept counts.
 * Provides its own SubmissionDataRepository (it needs only the DataSource) rather than importing
 * SubmissionsModule, whose controllers and intake the worker does not run.
 */
@Module({
  providers: [SubmissionDataRepository, SubmissionCountFolder],
})
export class SubmissionsWorkerModule {}
