import { Counter, Histogram, register } from 'prom-client';

function counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
  return (register.getSingleMetric(name) as Counter<L> | undefined) ?? new Counter({ name, help, labelNames });
}

function histogram(): Histogram<'service'> {
  const existing = register.getSingleMetric('collect_restservice_delivery_seconds');
  return (existing as Histogram<'service'>) ??
    new Histogram({ name: 'collect_restservice_delivery_seconds', help: 'Latency of rest-service delivery requests.', labelNames: ['service'], buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] });
}

/**
 * Process-wide metrics (one registry per process; several test apps share it). `service` is
 * the kind (generic_json, messaging, ...); `outcome` one of success, failed, retrying, skipped.
 */
export const deliveryMetrics = {
  attempts: counter('collect_restservice_deliveries_total', 'Rest-service delivery attempts by service and outcome (success, failed, retrying, skipped).', ['service_id', 'service', 'outcome']),
  latency: histogram(),
  /** Requests the destination limit moved to a later slot (docs/restservices.md, "Limits"). */
  deferred: counter('collect_restservice_rate_limited_total', 'Rest-service requests deferred by the destination rate limit or a Retry-After, by kind.', ['service']),
  autoDisabled: counter('collect_restservice_auto_disabled_total', 'Rest services switched off because every attempt failed for FORWARD_DISABLE_AFTER_HOURS, by kind.', ['service']),
  testFires: counter('collect_restservice_test_fires_total', 'Test-fire requests by kind and outcome (success: 2xx, failed: other status or error).', ['service', 'outcome']),
};
