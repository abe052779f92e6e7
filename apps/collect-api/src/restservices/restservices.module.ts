import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { EncryptedSubmissionsModule } from '../encrypted-submissions/encrypted-submissions.module.js';
import { SubmissionsModule } from '../submissions/submissions.module.js';
import { DeliveryAttemptLog } from './delivery/delivery-attempt-log.js';
import { DeliveryService } from './delivery/delivery.service.js';
import { NetworkGuard } from './destinations/network-guard.js';
import { DeliveryAttemptEntity, DeliveryEntity, ReplayEntity, RestServiceEntity } from './restservice.entities.js';
import { ReplayService } from './replay/replay.service.js';
import { ReplaysRepository } from './replay/replays.repository.js';
import { RestServicesController } from './restservices.controller.js';
import { RestServicesRepository } from './restservices.repository.js';
import { RestServicesService } from './restservices.service.js';
import { SheetsCallbackController } from './sheets/sheets-callback.controller.js';
import { SheetsRepository } from './sheets/sheets.repository.js';
import { SheetsService } from './sheets/sheets.service.js';
import { NETWORK_GUARD } from './restservices.tokens.js';
import { JobsModule } from '../jobs/jobs.module.js';
import { DestinationGate } from './destinations/destination-gate.js';
import { TestFireService } from './delivery/test-fire.service.js';
import { ServiceCredentials } from './service-credentials.js';
import { TestFireQuota } from './delivery/test-fire-quota.js';

/**
 * Rest services: CRUD, the delivery log, replays, the sender (DeliveryService, driven by the
 * worker's relay) and the `@OnJob('replay')` handler that the worker runs. The outbox writer is
 * bound in DeliveryOutboxModule; the relay and the log pruner run in the worker (DeliveryWorkerModule).
 */
@Module({
  imports: [TypeOrmModule.forFeature([RestServiceEntity, DeliveryEntity, DeliveryAttemptEntity, ReplayEntity]), SubmissionsModule, JobsModule, EncryptedSubmissionsModule],
  controllers: [SheetsCallbackController, RestServicesController],
  providers: [
    { provide: NETWORK_GUARD, inject: [COLLECT_CONFIG], useFactory: (config: CollectConfig) => new NetworkGuard(config.FORWARD_ALLOW_PRIVATE_NETWORKS) },
    RestServicesRepository,
    DeliveryService,
    DeliveryAttemptLog,
    RestServicesService,
    DestinationGate,
    TestFireService,
    ServiceCredentials,
    TestFireQuota,
    ReplaysRepository,
    ReplayService,
    SheetsRepository,
    SheetsService,
  ],
  exports: [RestServicesRepository, SheetsRepository, ReplaysRepository, ReplayService, DeliveryService],
})
export class RestServicesModule {}
