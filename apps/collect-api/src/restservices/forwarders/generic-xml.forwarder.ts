import { escapeXml } from '../../openrosa/xml.js';
import type { SubmissionJson } from '../../submissions/submission-json.js';
import type { Forwarder } from './forwarder.js';

/**
 * `POST service_url`, `application/xml`, body = the instance XML as stored (ODK's bytes, or
 * rendered for JSON submissions); a `deleted` event sends the identifiers under `<deleted>`.
 */
export const genericXmlForwarder: Forwarder = {
  build: (ctx) => ({ method: 'POST', url: ctx.service.serviceUrl, headers: { 'Content-Type': 'application/xml' }, body: Buffer.from(ctx.event === 'deleted' ? deletedXml(ctx.json) : ctx.submission.xml, 'utf8') }),
};

/** `<deleted><_id>1</_id><_uuid>…</_uuid><_xform_id_string>…</_xform_id_string><_deleted_at>…</_deleted_at></deleted>` */
export function deletedXml(ids: SubmissionJson): string {
  const el = (name: string) => `<${name}>${escapeXml(String(ids[name] ?? ''))}</${name}>`;
  return `<?xml version="1.0" encoding="UTF-8"?><deleted>${['_id', '_uuid', '_xform_id_string', '_deleted_at'].map(el).join('')}</deleted>`;
}
