import { Injectable } from '@nestjs/common';
import { CollectConfig } from '../../config/collect-config.js';
import { deliveryMetrics } from './delivery-metrics.js';
import { PeriodicWorker } from '../../jobs/periodic-worker.js';
import { RestServicesRepository } from '../restservices.repository.js';

/**
 * Auto-disable (docs/restservices.md, "Auto-disable"): a service whose every attempt has failed
 * for FORWARD_DISABLE_AFTER_HOURS (since its last success, or since it was last switched on)
 * becomes `active: false` with an `inactive_reason`; its open deliveries wait for
 * `PATCH {"active": true}`. Checked every FORWARD_DISABLE_CHECK_INTERVAL_MS in the delivery
 * worker; two workers checking at once switch a service off once (the UPDATE re-checks `active`).
 */
@Injectable()
export class AutoDisable extends PeriodicWorker<number> {
  constructor(private readonly repo: RestServicesRepository, private readonly config: CollectConfig) {
    super(config.FORWARD_DISABLE_CHECK_INTERVAL_MS);
  }

  protected firstDelayMs(): number | null {
    return this.config.FORWARD_DISABLE_AFTER_HOURS > 0 ? super.firstDelayMs() : null;
  }

  /** Switches off what has failed for the whole window; how many services. */
  checkOnce(): Promise<number> {
    return this.runOnce();
  }

  protected async pass(): Promise<number> {
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
}
