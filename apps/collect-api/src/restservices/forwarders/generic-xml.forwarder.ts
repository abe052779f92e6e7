import { escapeXml } from '../../openrosa/xml.js';
import type { SubmissionJson } from '../../submissions/submission-json.js';
import { renderInstanceXml } from '../../submissions/instance-xml.js';
import type { Forwarder } from './forwarder.js';
import { isXmlMetadata, selectFields } from './payload-fields.js';

/**
 * `POST service_url`, `application/xml`, body = the instance XML as stored (ODK's bytes, or
 * rendered for JSON submissions); a `deleted` event sends the identifiers under `<deleted>`.
 * With `fields` set, the instance is rendered from the stored record cut down to those fields
 * plus its `meta` block (the stored bytes would carry the rest).
 */
export const genericXmlForwarder: Forwarder = {
  build: (ctx) => ({
    method: 'POST',
    url: ctx.service.serviceUrl,
    headers: { 'Content-Type': 'application/xml' },
    body: Buffer.from(
      ctx.event === 'deleted' ? deletedXml(ctx.json)
        : ctx.service.fields ? renderInstanceXml(ctx.form, { ...selectFields(ctx.submission.json, ctx.service.fields, isXmlMetadata), 'meta/instanceID': `uuid:${ctx.submission.uuid}` })
        : ctx.submission.xml,
      'utf8',
    ),
  }),
};

/** `<deleted><_id>1</_id><_uuid>…</_uuid><_xform_id_string>…</_xform_id_string><_deleted_at>…</_deleted_at></deleted>` */
export function deletedXml(ids: SubmissionJson): string {
  const el = (name: string) => `<${name}>${escapeXml(String(ids[name] ?? ''))}</${name}>`;
  return `<?xml version="1.0" encoding="UTF-8"?><deleted>${['_id', '_uuid', '_xform_id_string', '_deleted_at'].map(el).join('')}</deleted>`;
}
