import { Module } from '@nestjs/common';
import { FormEncryptionModule } from '../form-encryption/form-encryption.module.js';
import { EnvelopeDecryption } from './envelope-decryption.js';
import { EnvelopeForwarding } from './envelope-forwarding.js';
import { EnvelopeIntake } from './envelope-intake.js';
import { EnvelopeStore } from './envelope-store.js';
import { EnvelopeRepository } from './envelope.repository.js';
import { FormVersionKeys } from './form-version-keys.js';

/**
 * Encrypted submissions as received (docs/encryption.md "Intake", "How an envelope is stored",
 * "Server mode"): the OpenRosa intake of envelopes, their storage, and decryption on receipt.
 * EnvelopeStore is the reading side for decrypting exports and pulls.
 */
@Module({
  imports: [FormEncryptionModule],
  providers: [EnvelopeRepository, FormVersionKeys, EnvelopeDecryption, EnvelopeIntake, EnvelopeStore, EnvelopeForwarding],
  exports: [EnvelopeIntake, EnvelopeStore, EnvelopeRepository, EnvelopeForwarding],
})
export class EncryptedSubmissionsModule {}
