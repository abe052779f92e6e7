import { Module } from '@nestjs/common';
import { FormsModule } from '../forms/forms.module.js';
import { EntitiesController } from './api/entities.controller.js';
import { EntitiesService } from './api/entities.service.js';
import { EntityListsController } from './api/entity-lists.controller.js';
import { EntityListsService } from './api/entity-lists.service.js';
import { EntityChanges } from './changes/entity-changes.js';
import { EntityFormsService } from './declarations/entity-forms.service.js';
import { EntityApplyService } from './intake/entity-apply.service.js';
import { EntityIntakeService } from './intake/entity-intake.service.js';
import { HeldUpdatesRepository } from './intake/held-updates.repository.js';
import { EntityListAccess } from './lists/entity-list-access.js';
import { EntityListsRepository } from './lists/entity-lists.repository.js';
import { EntitiesRepository } from './records/entities.repository.js';

/**
 * Entities (docs/entities.md): lists per owner, entities and their versions, publishing's and
 * intake's entity work, and `/api/v2/entity-lists`. Exports what intake calls (EntityIntakeService),
 * what other features read (EntityListAccess, the repositories) and where entity changes are
 * told (EntityChanges).
 */
@Module({
  imports: [FormsModule],
  controllers: [EntityListsController, EntitiesController],
  providers: [
    EntityListsRepository, EntitiesRepository, HeldUpdatesRepository, EntityChanges, EntityListAccess, EntityApplyService, EntityIntakeService,
    EntityFormsService, EntityListsService, EntitiesService,
  ],
  exports: [EntityIntakeService, EntityListAccess, EntityListsRepository, EntitiesRepository, EntityChanges],
})
export class EntitiesModule {}
