import { BullModule } from '@nestjs/bull';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { SubmissionsModule } from '../submissions/submissions.module.js';
import { DeliveryLogPruner } from './delivery-log-pruner.js';
import { DeliveryRelay } from './delivery-relay.js';
import { DeliveryService } from './delivery.service.js';
import { NetworkGuard } from './network-guard.js';
import { DeliveryAttemptEntity, DeliveryEntity, RestServiceEntity } from './restservice.entities.js';
import { RestServicesController } from './restservices.controller.js';
import { RestServicesRepository } from './restservices.repository.js';
import { RestServicesService } from './restservices.service.js';
import { SheetsCallbackController } from './sheets/sheets-callback.controller.js';
import { SheetsRepository } from './sheets/sheets.repository.js';
import { SheetsService } from './sheets/sheets.service.js';
import { DELIVERY_QUEUE, NETWORK_GUARD } from './restservices.tokens.js';

/**
 * Rest services: CRUD, the transactional outbox (a SubmissionEvents hook), the relay onto Bull
 * and the delivery worker (active in dist/worker.js or with FORWARD_DELIVER_IN_PROCESS).
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([RestServiceEntity, DeliveryEntity, DeliveryAttemptEntity]),
    SubmissionsModule,
    BullModule.registerQueueAsync({
      name: DELIVERY_QUEUE,
      inject: [COLLECT_CONFIG],
      useFactory: (config: CollectConfig) => ({
        // A job's lock must outlive one request; a worker that dies loses its lock and Bull
        // hands the job on (the row lease in Postgres is the backstop).
        settings: { lockDuration: config.FORWARD_TIMEOUT_MS + 10_000, stalledInterval: Math.min(config.FORWARD_TIMEOUT_MS + 10_000, 30_000), maxStalledCount: 2 },
      }),
    }),
  ],
  controllers: [SheetsCallbackController, RestServicesController],
  providers: [
    { provide: NETWORK_GUARD, inject: [COLLECT_CONFIG], useFactory: (config: CollectConfig) => new NetworkGuard(config.FORWARD_ALLOW_PRIVATE_NETWORKS) },
    RestServicesRepository,
    DeliveryService,
    DeliveryRelay,
    DeliveryLogPruner,
    RestServicesService,
    SheetsRepository,
    SheetsService,
  ],
  exports: [DeliveryRelay],
})
export class RestServicesModule {}
