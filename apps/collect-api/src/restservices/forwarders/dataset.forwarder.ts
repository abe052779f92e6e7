import type { SubmissionJson } from '../../submissions/submission-json.js';
import { jsonBody, type Forwarder } from './forwarder.js';

/**
 * `POST service_url`, a JSON array with one row. Metadata columns (`_...`, `meta/...`) get the
 * prefix `<id_string>_<form id>` so rows of several forms can be merged in one dataset
 * (`_id` → `survey_12_id`, `meta/instanceID` → `survey_12_meta/instanceID`). The service's
 * `dataset_id` (when set) is sent as `_bamboo_dataset_id`.
 */
export const datasetForwarder: Forwarder = {
  build: (ctx) => ({
    method: 'POST',
    url: ctx.service.serviceUrl,
    headers: { 'Content-Type': 'application/json' },
    body: jsonBody([datasetRow(ctx.json, ctx.form.idString, ctx.form.id, ctx.service.options.dataset_id)]),
  }),
};

export function datasetRow(json: SubmissionJson, idString: string, formId: number, datasetId: string | undefined): SubmissionJson {
  const prefix = `${idString}_${formId}`;
  const source = datasetId ? { ...json, _bamboo_dataset_id: datasetId } : json;
  const row: SubmissionJson = {};
  for (const [key, value] of Object.entries(source)) {
    if (key.startsWith('_')) row[`${prefix}${key}`] = value;
    else if (key.startsWith('meta/')) row[`${prefix}_${key}`] = value;
    else row[key] = value;
  }
  return row;
}
