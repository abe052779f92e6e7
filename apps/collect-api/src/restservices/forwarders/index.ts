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

export type { Forwarder, ForwardContext, OutgoingRequest } from './forwarder.js';
