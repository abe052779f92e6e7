import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SubmissionEntity } from '../submissions/submission.entity.js';
import { SubmissionsModule } from '../submissions/submissions.module.js';
import { DataviewEntity, MergedDatasetEntity } from './dataset.entities.js';
import { DataviewsController, MergedDatasetsController } from './datasets.controller.js';
import { DatasetsRepository } from './datasets.repository.js';
import { DatasetsService } from './datasets.service.js';

/**
 * Merged datasets and dataviews. Exports DatasetsService: `mergedFormIds(user, id)` and
 * `dataviewFilter(user, id, alias)` are what media filters by.
 */
@Module({
  imports: [TypeOrmModule.forFeature([MergedDatasetEntity, DataviewEntity, SubmissionEntity]), SubmissionsModule],
  controllers: [MergedDatasetsController, DataviewsController],
  providers: [DatasetsRepository, DatasetsService],
  exports: [DatasetsService],
})
export class DatasetsModule {}
