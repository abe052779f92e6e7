import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { FormEntity, FormRoleEntity, FormVersionEntity } from './form.entity.js';
import { FormAccessService } from './form-access.service.js';
import { FormCache } from './form-cache.js';
import { FormsRepository } from './forms.repository.js';
import { FormListController } from './form-list.controller.js';
import { FormsController } from './forms.controller.js';
import { FormsService } from './forms.service.js';
import { FormPublishHooks } from './form-publish-hooks.js';
import { XlsFormConversion } from './xlsform-conversion.js';
import { UsersModule } from '../users/users.module.js';
import { FormMediaStoreModule } from '../form-media/form-media-store.module.js';

/**
 * Forms, roles and sharing. Exports FormAccessService: the one role check of every module
 * (`requireRole(user, formId, 'readonly')` → 404 unseen / 403 too low).
 */
@Module({
  imports: [TypeOrmModule.forFeature([FormEntity, FormRoleEntity, FormVersionEntity]), UsersModule, FormMediaStoreModule],
  controllers: [FormsController, FormListController],
  providers: [FormsRepository, FormAccessService, FormsService, XlsFormConversion, FormCache, FormPublishHooks],
  exports: [FormsRepository, FormAccessService, FormsService, FormCache, FormPublishHooks],
})
export class FormsModule {}
