import { Counter, Histogram, register } from 'prom-client';

function counter(): Counter<'service_id' | 'service' | 'outcome'> {
  const existing = register.getSingleMetric('collect_restservice_deliveries_total');
  return (existing as Counter<'service_id' | 'service' | 'outcome'>) ??
    new Counter({ name: 'collect_restservice_deliveries_total', help: 'Rest-service delivery attempts by service and outcome (success, failed, retrying, skipped).', labelNames: ['service_id', 'service', 'outcome'] });
}

function histogram(): Histogram<'service'> {
  const existing = register.getSingleMetric('collect_restservice_delivery_seconds');
  return (existing as Histogram<'service'>) ??
    new Histogram({ name: 'collect_restservice_delivery_seconds', help: 'Latency of rest-service delivery requests.', labelNames: ['service'], buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] });
}

/** Process-wide metrics (one registry per process; several test apps share it). */
export const deliveryMetrics = { attempts: counter(), latency: histogram() };
