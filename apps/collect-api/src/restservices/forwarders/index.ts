import type { ServiceName } from '../restservice.entities.js';
import type { Forwarder } from './forwarder.js';
import { datasetForwarder } from './dataset.forwarder.js';
import { genericJsonForwarder } from './generic-json.forwarder.js';
import { genericXmlForwarder } from './generic-xml.forwarder.js';
import { healthForwarder } from './health.forwarder.js';
import { messagingForwarder } from './messaging.forwarder.js';

/** The forwarders this server can deliver with. `spreadsheet` has none yet (docs/restservices.md). */
export const FORWARDERS: Partial<Record<ServiceName, Forwarder>> = {
  generic_json: genericJsonForwarder,
  generic_xml: genericXmlForwarder,
  health_forwarder: healthForwarder,
  dataset_service: datasetForwarder,
  messaging: messagingForwarder,
};

/** Service names that get an outbox row for an event. */
export function namesFor(event: 'created' | 'updated'): ServiceName[] {
  return (Object.entries(FORWARDERS) as Array<[ServiceName, Forwarder]>).filter(([, f]) => event === 'created' || f.forwardsUpdates).map(([n]) => n);
}

export type { Forwarder, ForwardContext, OutgoingRequest } from './forwarder.js';
