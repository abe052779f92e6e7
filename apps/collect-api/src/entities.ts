import { UserEntity } from './users/user.entity.js';
import { ApiTokenEntity, TempTokenEntity } from './users/user-token.entity.js';
import { OAuthApplicationEntity, OAuthGrantEntity, OAuthTokenEntity } from './oauth2/oauth2.entities.js';
import { FormEntity, FormRoleEntity, FormVersionEntity } from './forms/form.entity.js';
import { FormMediaEntity } from './form-media/form-media.entity.js';
import { AttachmentEntity, SubmissionEntity } from './submissions/submission.entity.js';
import { DataviewEntity, MergedDatasetEntity } from './datasets/dataset.entities.js';
import { DeliveryAttemptEntity, DeliveryEntity, ReplayEntity, RestServiceEntity } from './restservices/restservice.entities.js';
import { ExportJobEntity } from './exports/export-job.entity.js';

/** Every TypeORM entity of collect-api. Append new ones (one line each). */
export const entities = [UserEntity, ApiTokenEntity, TempTokenEntity, OAuthApplicationEntity, OAuthGrantEntity, OAuthTokenEntity];
(entities as Function[]).push(FormEntity, FormRoleEntity, SubmissionEntity, AttachmentEntity, MergedDatasetEntity, DataviewEntity);
(entities as Function[]).push(RestServiceEntity, DeliveryEntity, DeliveryAttemptEntity, ReplayEntity);
(entities as Function[]).push(FormVersionEntity, FormMediaEntity);
(entities as Function[]).push(ExportJobEntity);
