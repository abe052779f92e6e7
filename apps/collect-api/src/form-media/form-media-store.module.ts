import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { FormMediaEntity } from './form-media.entity.js';
import { FormMediaRepository } from './form-media.repository.js';
import { FormMediaStore } from './form-media.store.js';

/**
 * Form media storage without access checks, in its own folder below forms/: forms/ (itemsets.csv
 * of an XLSForm, the manifest's media) uses it and the metadata API (metadata/, above forms/)
 * adds the access rules (docs/architecture.md, "Layers").
 */
@Module({
  imports: [TypeOrmModule.forFeature([FormMediaEntity])],
  providers: [FormMediaRepository, FormMediaStore],
  exports: [FormMediaRepository, FormMediaStore],
})
export class FormMediaStoreModule {}
