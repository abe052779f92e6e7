import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { FormMediaEntity } from './form-media.entity.js';
import { FormMediaRepository } from './form-media.repository.js';
import { FormMediaStore } from './form-media.store.js';

/**
 * Form media storage without access checks, so forms/ (itemsets.csv of an XLSForm) can use it
 * while the metadata API (MetadataModule) depends on forms/: imports run one way.
 */
@Module({
  imports: [TypeOrmModule.forFeature([FormMediaEntity])],
  providers: [FormMediaRepository, FormMediaStore],
  exports: [FormMediaRepository, FormMediaStore],
})
export class FormMediaStoreModule {}
