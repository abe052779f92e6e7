import { renderInstanceXml } from '../../submissions/submission-record.js';
import type { Forwarder } from './forwarder.js';
import { isXmlMetadata, selectFields } from './payload-fields.js';

/**
 * `POST service_url`, `application/xml`, body = the instance XML as stored (ODK's bytes, or
 * rendered for JSON submissions). With `fields` set, the instance is rendered from the stored
 * record cut down to those fields plus its `meta` block (the stored bytes would carry the rest).
 */
export const genericXmlForwarder: Forwarder = {
  forwardsUpdates: true,
  build: (ctx) => ({
    method: 'POST',
    url: ctx.service.serviceUrl,
    headers: { 'Content-Type': 'application/xml' },
    body: Buffer.from(ctx.service.fields ? renderInstanceXml(ctx.form, { ...selectFields(ctx.submission.json, ctx.service.fields, isXmlMetadata), 'meta/instanceID': `uuid:${ctx.submission.uuid}` }) : ctx.submission.xml, 'utf8'),
  }),
};
