import { Module } from '@nestjs/common';
import { JobsModule } from '../jobs/jobs.module.js';
import { DeliveryLogPruner } from './delivery/delivery-log-pruner.js';
import { DeliveryRelay } from './delivery/delivery-relay.js';
import { RestServicesModule } from './restservices.module.js';
import { AutoDisable } from './delivery/auto-disable.js';
import { ReplayResumer } from './replay/replay-resumer.js';

/**
 * The background side of rest services, for the worker composition: outbox relay, log pruning,
 * auto-disable of failing services, resuming replays.
 */
@Module({
  imports: [RestServicesModule, JobsModule],
  providers: [DeliveryRelay, DeliveryLogPruner, AutoDisable, ReplayResumer],
})
export class DeliveryWorkerModule {}
