import { jsonBody, type Forwarder } from './forwarder.js';
import { isJsonMetadata, selectFields } from './payload-fields.js';

/** `POST service_url`, `application/json`, body = the §2.2 submission object (cut to `fields` when set). */
export const genericJsonForwarder: Forwarder = {
  // A `deleted` body is the identifiers only, whatever `fields` says (docs/restservices.md, "Events").
  build: (ctx) => ({ method: 'POST', url: ctx.service.serviceUrl, headers: { 'Content-Type': 'application/json' }, body: jsonBody(ctx.event === 'deleted' ? ctx.json : selectFields(ctx.json, ctx.service.fields, isJsonMetadata)) }),
};
