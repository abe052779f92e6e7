import { Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller.js';

/**
 * `/metrics`: the process-wide prom-client registry in Prometheus text format. Features
 * register their own counters on that registry (restservices/delivery/delivery-metrics.ts); this module
 * only serves it, so the API and the worker entry both import it.
 */
@Module({ controllers: [MetricsController] })
export class MetricsModule {}
