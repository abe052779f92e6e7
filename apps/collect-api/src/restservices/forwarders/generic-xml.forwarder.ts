import type { Forwarder } from './forwarder.js';

/** `POST service_url`, `application/xml`, body = the instance XML as stored (ODK's bytes, or rendered for JSON submissions). */
export const genericXmlForwarder: Forwarder = {
  forwardsUpdates: true,
  build: (ctx) => ({ method: 'POST', url: ctx.service.serviceUrl, headers: { 'Content-Type': 'application/xml' }, body: Buffer.from(ctx.submission.xml, 'utf8') }),
};
