import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { SubmissionsModule } from '../submissions/submissions.module.js';
import { AttachmentEntity } from '../submissions/submission.entity.js';
import { MediaController } from './media.controller.js';
import { MediaRepository } from './media.repository.js';
import { MediaService } from './media.service.js';
import { MediaVariantsQueue } from './media-variants.queue.js';
import { JobsModule } from '../jobs/jobs.module.js';
import { MediaVariantsService } from './media-variants.service.js';

/** Media listing, counts, downloads and image variants (docs/media.md). */
@Module({
  imports: [TypeOrmModule.forFeature([AttachmentEntity]), SubmissionsModule, DatasetsModule, JobsModule],
  controllers: [MediaController],
  providers: [MediaRepository, MediaService, MediaVariantsService, MediaVariantsQueue],
  exports: [MediaVariantsService, MediaService, MediaRepository],
})
export class MediaModule {}
