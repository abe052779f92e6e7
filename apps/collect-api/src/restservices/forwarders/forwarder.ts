import type { FormEntity } from '../../forms/form.entity.js';
import type { SubmissionJson } from '../../submissions/submission-json.js';
import type { SubmissionEntity } from '../../submissions/submission.entity.js';
import type { DeliveryEvent, RestServiceEntity } from '../restservice.entities.js';

/** What a forwarder gets: the submission as its event recorded it (delivery-snapshot.ts) and its service (secrets decrypted). */
export interface ForwardContext {
  service: RestServiceEntity;
  authToken: string | null;
  submission: SubmissionEntity;
  form: FormEntity;
  /** The §2.2 object from buildSubmissionJson; for a `deleted` event the identifiers only (`_id`, `_uuid`, `_xform_id_string`, `_deleted_at`). */
  json: SubmissionJson;
  event: DeliveryEvent;
}

/** The request to send, minus the headers every delivery carries (added by the sender). */
export interface OutgoingRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body: Buffer | null;
}

export interface Forwarder {
  build(ctx: ForwardContext): OutgoingRequest;
}

export function jsonBody(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}
