import type { SubmissionJson } from '../../submissions/submission-json.js';
import { jsonBody, type Forwarder } from './forwarder.js';

/**
 * Flow start: `POST service_url`, `Authorization: Token <auth_token>`,
 * `{"flow": flow_uuid, "contacts": [...], "extra": {...}}` (docs/api-conventions.md §Forwarding).
 */
export const messagingForwarder: Forwarder = {
  build: (ctx) => ({
    method: 'POST',
    url: ctx.service.serviceUrl,
    headers: { 'Content-Type': 'application/json', Authorization: `Token ${ctx.authToken ?? ''}` },
    body: jsonBody({ flow: ctx.service.options.flow_uuid, contacts: splitContacts(ctx.service.options.contacts ?? ''), extra: flowExtra(ctx.json) }),
  }),
};

export function splitContacts(contacts: string): string[] {
  return contacts.split(',').map((c) => c.trim()).filter(Boolean);
}

/** "/" in keys → "_", nulls dropped, arrays (repeats, attachments, geolocation) JSON-encoded. */
export function flowExtra(json: SubmissionJson): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(json)) {
    if (value === null || value === undefined) continue;
    extra[key.replace(/\//g, '_')] = Array.isArray(value) ? JSON.stringify(value) : value;
  }
  return extra;
}
