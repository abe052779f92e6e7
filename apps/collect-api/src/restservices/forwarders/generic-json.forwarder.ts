import { jsonBody, type Forwarder } from './forwarder.js';

/** `POST service_url`, `application/json`, body = the §2.2 submission object. */
export const genericJsonForwarder: Forwarder = {
  build: (ctx) => ({ method: 'POST', url: ctx.service.serviceUrl, headers: { 'Content-Type': 'application/json' }, body: jsonBody(ctx.json) }),
};
