import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { JobHandlerRegistry } from './job-handler.registry.js';
import { JobWorker } from './job-worker.js';
import { JobsModule } from './jobs.module.js';

/** Consumes every queue; imported only by the worker composition (worker.module.ts). */
@Module({
  imports: [DiscoveryModule, JobsModule],
  providers: [JobHandlerRegistry, JobWorker],
})
export class JobWorkerModule {}
