import type { SubmissionJson } from '../../submissions/submission-json.js';
import type { Forwarder } from './forwarder.js';

/**
 * `GET service_url` with `%(name)s` placeholders filled from the submission: `id_string`, `uuid`
 * and every field (slashes in xpaths become `_`), values URL-encoded; an unknown name becomes "".
 */
export const healthForwarder: Forwarder = {
  build: (ctx) => ({ method: 'GET', url: fillTemplate(ctx.service.serviceUrl, templateValues(ctx.json, ctx.form.idString)), headers: {}, body: null }),
};

export function templateValues(json: SubmissionJson, idString: string): Map<string, string> {
  const values = new Map<string, string>();
  for (const [key, value] of Object.entries(json)) {
    if (value === null || value === undefined) continue;
    values.set(key.replace(/\//g, '_'), typeof value === 'string' ? value : JSON.stringify(value));
  }
  values.set('id_string', idString);
  values.set('uuid', String(json._uuid ?? ''));
  return values;
}

export function fillTemplate(template: string, values: Map<string, string>): string {
  // service_url is stored as typed; placeholders may have been percent-encoded by a client.
  // `%(group/q)s` is accepted as well as the documented `%(group_q)s`.
  return template.replace(/%(?:\(|28)([A-Za-z0-9_.:/-]+)(?:\)|%29)s/g, (_m, name: string) => encodeURIComponent(values.get(name.replace(/\//g, '_')) ?? ''));
}
