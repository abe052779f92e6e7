import { Module } from '@nestjs/common';
import { EncryptedSubmissionsModule } from '../encrypted-submissions/encrypted-submissions.module.js';
import { FormEncryptionModule } from '../form-encryption/form-encryption.module.js';
import { FormsModule } from '../forms/forms.module.js';
import { DecryptExportRepository } from './decrypt-export.repository.js';
import { DecryptExportService } from './decrypt-export.service.js';
import { DecryptKeys } from './decrypt-keys.js';
import { DecryptController } from './decrypt.controller.js';

/** `POST /api/v1/forms/{pk}/decrypt`: decrypted exports without a server-held key (docs/encryption.md). */
@Module({
  imports: [FormsModule, FormEncryptionModule, EncryptedSubmissionsModule],
  controllers: [DecryptController],
  providers: [DecryptExportService, DecryptKeys, DecryptExportRepository],
})
export class EncryptionExportModule {}
