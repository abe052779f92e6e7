import { Global, Module } from '@nestjs/common';
import { EntitiesModule } from '../../entities/entities.module.js';
import { SUBMISSION_OUTBOX } from '../../submissions/submission-outbox.js';
import { DeliveryOutbox } from './delivery-outbox.js';
import { EntityOutbox } from './entity-outbox.js';

/**
 * Binds the submissions' outbox port (SUBMISSION_OUTBOX) to the rest-service outbox writer
 * (also exported as DeliveryOutbox for `wake()`).
 * Global because the port's user (submissions) sits below restservices in the layer order and
 * may not import it; this binding is the one place a submission is tied to deliveries. Entity
 * changes reach the outbox through the entities' own port (EntityOutbox, an EntityChanges sink).
 */
@Global()
@Module({
  imports: [EntitiesModule],
  providers: [DeliveryOutbox, EntityOutbox, { provide: SUBMISSION_OUTBOX, useExisting: DeliveryOutbox }],
  exports: [SUBMISSION_OUTBOX, DeliveryOutbox],
})
export class DeliveryOutboxModule {}
