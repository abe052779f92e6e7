import { Module } from '@nestjs/common';
import { FormsModule } from '../forms/forms.module.js';
import { FormMediaStoreModule } from '../form-media/form-media-store.module.js';
import { EntityAttachmentsModule } from '../entity-attachments/entity-attachments.module.js';
import { MetadataController } from './metadata.controller.js';
import { MetadataService } from './metadata.service.js';
import { OpenRosaManifestService } from './openrosa-manifest.service.js';
import { OpenRosaMediaController } from './openrosa-media.controller.js';

/** Form media: the metadata API, the OpenRosa manifest and media downloads (docs/forms.md). */
@Module({
  imports: [FormsModule, FormMediaStoreModule, EntityAttachmentsModule],
  controllers: [MetadataController, OpenRosaMediaController],
  providers: [MetadataService, OpenRosaManifestService],
})
export class MetadataModule {}
