import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { COLLECT_CONFIG, type CollectConfig } from '../../config/collect-config.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { PeriodicTask } from '../../jobs/periodic-task.js';
import { RestServicesRepository } from '../restservices.repository.js';

/**
 * Auto-disable (docs/restservices.md, "Auto-disable"): a service whose every attempt has failed
 * for FORWARD_DISABLE_AFTER_HOURS (since its last success, or since it was last switched on)
 * becomes `active: false` with an `inactive_reason`; its open deliveries wait for
 * `PATCH {"active": true}`. Checked every FORWARD_DISABLE_CHECK_INTERVAL_MS in the delivery
 * worker; two workers checking at once switch a service off once (the UPDATE re-checks `active`).
 */
@Injectable()
export class AutoDisable implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(AutoDisable.name);
  private readonly task: PeriodicTask<number>;

  constructor(
    private readonly repo: RestServicesRepository,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {
    this.task = new PeriodicTask(() => this.check(), config.FORWARD_DISABLE_CHECK_INTERVAL_MS);
  }

  onApplicationBootstrap(): void {
    if (this.config.FORWARD_DISABLE_AFTER_HOURS > 0) this.task.start();
  }

  /** Switches off what has failed for the whole window; how many services. */
  checkOnce(): Promise<number> {
    return this.task.runOnce();
  }

  private async check(): Promise<number> {
    const hours = this.config.FORWARD_DISABLE_AFTER_HOURS;
    try {
      const disabled = await this.repo.disableFailing(Math.round(hours * 3_600_000), `Every delivery attempt failed for ${hours} hour${hours === 1 ? '' : 's'}`);
      for (const s of disabled) {
        deliveryMetrics.autoDisabled.inc({ service: s.name });
        this.logger.warn({ event: 'restservice.auto_disabled', serviceId: s.id, service: s.name, failingSince: s.failingSince }, 'rest service switched off: every attempt failed');
      }
      return disabled.length;
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'auto-disable check failed; will retry');
      return 0;
    }
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }
}
