import { Module } from '@nestjs/common';
import { FormsModule } from '../forms/forms.module.js';
import { FormEncryptionController } from './form-encryption.controller.js';
import { FormEncryptionRepository } from './form-encryption.repository.js';
import { FormEncryptionService } from './form-encryption.service.js';

/** Keys of encrypted forms: `/api/v1/forms/{pk}/encryption` (docs/encryption.md). */
@Module({
  imports: [FormsModule],
  controllers: [FormEncryptionController],
  providers: [FormEncryptionService, FormEncryptionRepository],
  exports: [FormEncryptionRepository],
})
export class FormEncryptionModule {}
