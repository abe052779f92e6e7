import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { FormEntity, FormRoleEntity } from './form.entity.js';
import { FormAccessService } from './form-access.service.js';
import { FormsRepository } from './forms.repository.js';
import { FormListController } from './form-list.controller.js';
import { FormsController } from './forms.controller.js';
import { FormsService } from './forms.service.js';
import { UsersModule } from '../users/users.module.js';

/**
 * Forms, roles and sharing. Exports FormAccessService: the one role check of every module
 * (`requireRole(user, formId, 'readonly')` → 404 unseen / 403 too low).
 */
@Module({
  imports: [TypeOrmModule.forFeature([FormEntity, FormRoleEntity]), UsersModule],
  controllers: [FormsController, FormListController],
  providers: [FormsRepository, FormAccessService, FormsService],
  exports: [FormsRepository, FormAccessService, FormsService],
})
export class FormsModule {}
