import type { ServiceName } from '../restservice.entities.js';
import type { Forwarder } from './forwarder.js';
import { datasetForwarder } from './dataset.forwarder.js';
import { genericJsonForwarder } from './generic-json.forwarder.js';
import { genericXmlForwarder } from './generic-xml.forwarder.js';
import { healthForwarder } from './health.forwarder.js';
import { messagingForwarder } from './messaging.forwarder.js';

/** The HTTP forwarders; `spreadsheet` is delivered by SheetsService (OAuth grant, row map). */
export const FORWARDERS: Partial<Record<ServiceName, Forwarder>> = {
  generic_json: genericJsonForwarder,
  generic_xml: genericXmlForwarder,
  health_forwarder: healthForwarder,
  dataset_service: datasetForwarder,
  messaging: messagingForwarder,
};

/** Service names that get an outbox row for an event (spreadsheet only with sync_updates for edits/deletes). */
export function namesFor(event: 'created' | 'updated' | 'deleted'): ServiceName[] {
  if (event === 'deleted') return ['spreadsheet'];
  const http = (Object.entries(FORWARDERS) as Array<[ServiceName, Forwarder]>).filter(([, f]) => event === 'created' || f.forwardsUpdates).map(([n]) => n);
  return [...http, 'spreadsheet'];
}

export type { Forwarder, ForwardContext, OutgoingRequest } from './forwarder.js';
