import type { DynamicModule, Type } from '@nestjs/common';
import { RootModule } from './root/root.module.js';
import { AuthModule } from './auth/auth.module.js';
import { OAuth2Module } from './oauth2/oauth2.module.js';
import { ProfilesModule } from './profiles/profiles.module.js';
import { StorageModule } from './storage/storage.module.js';
import { FormsModule } from './forms/forms.module.js';
import { SubmissionsModule } from './submissions/submissions.module.js';
import { DatasetsModule } from './datasets/datasets.module.js';
import { RestServicesModule } from './restservices/restservices.module.js';
import { DeliveryOutboxModule } from './restservices/delivery/delivery-outbox.module.js';
import { MediaModule } from './media/media.module.js';
import { CasClientModule } from './cas-client/cas-client.module.js';
import { OnboardingModule } from './onboarding/onboarding.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { ExportsModule } from './exports/exports.module.js';
import { MetadataModule } from './metadata/metadata.module.js';
import { FormEncryptionModule } from './form-encryption/form-encryption.module.js';
import { ApiTokensModule } from './api-tokens/api-tokens.module.js';
import { EncryptedSubmissionsModule } from './encrypted-submissions/encrypted-submissions.module.js';
import { BriefcaseModule } from './briefcase/briefcase.module.js';
import { EncryptionExportModule } from './encryption-export/encryption-export.module.js';
import { EntityAttachmentsModule } from './entity-attachments/entity-attachments.module.js';
import { EntitiesModule } from './entities/entities.module.js';

/** The feature modules of collect-api, one per folder. Append new ones (one line each). */
export const featureModules: Array<Type | DynamicModule> = [RootModule, AuthModule, OAuth2Module, ProfilesModule];
// ExportsModule before SubmissionsModule: its `data/:formPk.csv` routes must be registered
// before `data/:formPk` (Nest registers routes in module order; exports/exports.controller.ts).
featureModules.push(StorageModule, FormsModule, ExportsModule, SubmissionsModule, DatasetsModule);
featureModules.push(RestServicesModule, DeliveryOutboxModule);
featureModules.push(MediaModule);
featureModules.push(CasClientModule, OnboardingModule);
featureModules.push(RateLimitModule);
featureModules.push(MetadataModule);
featureModules.push(FormEncryptionModule);
featureModules.push(ApiTokensModule);
featureModules.push(EncryptedSubmissionsModule);
featureModules.push(BriefcaseModule);
featureModules.push(EncryptionExportModule);
featureModules.push(EntityAttachmentsModule);
featureModules.push(EntitiesModule);
