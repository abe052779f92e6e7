import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DatasetsModule } from '../datasets/datasets.module.js';
import { EntitiesModule } from '../entities/entities.module.js';
import { EntityAttachmentsModule } from '../entity-attachments/entity-attachments.module.js';
import { FormsModule } from '../forms/forms.module.js';
import { JobsModule } from '../jobs/jobs.module.js';
import { MediaModule } from '../media/media.module.js';
import { SubmissionsModule } from '../submissions/submissions.module.js';
import { ExportJobEntity } from './export-job.entity.js';
import { ExportJobsController } from './export-jobs.controller.js';
import { ExportJobsRepository } from './export-jobs.repository.js';
import { ExportAccess } from './export-access.js';
import { ExportJobsService } from './export-jobs.service.js';
import { ExportRunner } from './export-runner.js';
import { ExportsController } from './exports.controller.js';
import { ExportsService } from './exports.service.js';
import { EntityListExportsController } from './entity-list-exports.controller.js';
import { MediaArchiveController } from './media-archive.controller.js';

/**
 * Data out (docs/exports.md): CSV/XLSX exports, asynchronous exports, media archives, entity
 * lists as CSV and XLSX (docs/entities.md, "Exports of a list"). The
 * `export` job's handler (ExportRunner) runs in the worker, which imports this module too.
 */
@Module({
  imports: [TypeOrmModule.forFeature([ExportJobEntity]), FormsModule, SubmissionsModule, DatasetsModule, MediaModule, JobsModule, EntitiesModule, EntityAttachmentsModule],
  controllers: [ExportsController, ExportJobsController, MediaArchiveController, EntityListExportsController],
  providers: [ExportsService, ExportAccess, ExportJobsService, ExportJobsRepository, ExportRunner],
})
export class ExportsModule {}
