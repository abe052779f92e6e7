import { Module } from '@nestjs/common';
import { JobsModule } from '../jobs/jobs.module.js';
import { DeliveryLogPruner } from './delivery-log-pruner.js';
import { DeliveryRelay } from './delivery-relay.js';
import { RestServicesModule } from './restservices.module.js';

/** The background side of rest services, for the worker composition: outbox relay and log pruning. */
@Module({
  imports: [RestServicesModule, JobsModule],
  providers: [DeliveryRelay, DeliveryLogPruner],
})
export class DeliveryWorkerModule {}
