import type { FormEntity } from '../../forms/form.entity.js';
import { buildSubmissionJson, type SubmissionJson } from '../../submissions/submission-json.js';
import { formatSubmissionTime } from '../../wire-formats/api-time.js';
import type { AttachmentEntity, SubmissionEntity } from '../../submissions/submission.entity.js';
import type { DeliveryEvent, DeliverySnapshot } from '../restservice.entities.js';

/**
 * SQL of the snapshot of submission `$<id>` (an uncorrelated scalar subquery: PostgreSQL runs it
 * once per statement, and not at all when no service takes the event). `missing` is the SQL of a
 * jsonb array of names.
 */
export function snapshotSql(id: string, missing: string): string {
  return `(SELECT ${snapshotOfRowSql('snap', missing)} FROM submissions snap WHERE snap.id = ${id})`;
}

/**
 * SQL of the snapshot of the `submissions` row under `alias` of the enclosing query (a replay
 * writes one row per submission it reads). `submission`: the SQL of its `submission` object
 * (liveSnapshotSql builds it from the columns).
 */
export function snapshotOfRowSql(alias: string, missing: string, submission = `to_jsonb(${alias})`): string {
  return `jsonb_build_object(
      'submission', ${submission},
      'attachments', ${attachmentsSql(`${alias}.id`)},
      'submitted_by', (SELECT u.username FROM users u WHERE u.id = ${alias}.submitted_by_id),
      'missing_media', ${missing})`;
}

/** The columns of `submissions` but `xml`: the keys of a snapshot's `submission` (`to_jsonb` of the row) without the XML. */
const COLUMNS_BUT_XML = ['id', 'form_id', 'uuid', 'json', 'content_hash', 'status', 'submitted_by_id', 'version', 'edited', 'bamboo_dataset_id', 'date_created', 'date_modified', 'deleted_at'];

/**
 * SQL: the snapshot of submission `submissionId` as it is now, as the outbox statement would have
 * stored it for a service named `serviceName` (snapshotOfRowSql with snapshotForServiceSql): what
 * the claim returns for a row that stores none (restservices/delivery/delivery-statements.ts, CLAIMED). The
 * `submission` object is built from the columns, the XML only when the service sends it: `to_jsonb`
 * of the whole row would decompress and escape the XML (6 kB for the soak's 250 answers) for
 * every claim and then drop it. A test compares the two (restservices-snapshot.e2e.ts).
 */
export function liveSnapshotSql(submissionId: string, serviceName: string): string {
  const columns = COLUMNS_BUT_XML.map((c) => `'${c}', s.${c}`).join(', ');
  const submission = `jsonb_build_object(${columns}) || CASE WHEN ${sendsXmlSql(serviceName)} THEN jsonb_build_object('xml', s.xml) ELSE '{}'::jsonb END`;
  return `(SELECT ${snapshotOfRowSql('s', `'[]'::jsonb`, submission)} FROM submissions s WHERE s.id = ${submissionId})`;
}

/** The services whose requests carry the instance XML (forwarders/generic-xml.forwarder.ts). */
export const XML_SERVICES: readonly string[] = ['generic_xml'];

/** SQL: whether the service named `serviceName` (an SQL expression) is one of XML_SERVICES. */
function sendsXmlSql(serviceName: string): string {
  return `${serviceName} IN (${XML_SERVICES.map((n) => `'${n}'`).join(', ')})`;
}

/**
 * SQL: snapshot `snapshot` as stored for a service named `serviceName` (SQL expressions): without
 * the submission's `xml` unless the service sends it. Every other forwarder builds its request
 * from the JSON, and a delivery row is written three times (outbox insert, claim, attempt end)
 * with none of its updates HOT, so the XML was copied three times into the table and the WAL
 * for nothing (docs/restservices.md, "Connections and batches (the worker's hot path)"). A row whose service
 * became a generic_xml one later reloads the live submission (DeliveryService.payloadOf).
 */
export function snapshotForServiceSql(snapshot: string, serviceName: string): string {
  return `CASE WHEN ${sendsXmlSql(serviceName)} THEN ${snapshot} ELSE ${snapshot} #- '{submission,xml}' END`;
}

/** SQL: the live attachments of a submission as a jsonb array. */
export function attachmentsSql(submissionId: string): string {
  return `COALESCE((SELECT jsonb_agg(to_jsonb(a) ORDER BY a.id) FROM attachments a WHERE a.submission_id = ${submissionId} AND a.deleted_at IS NULL), '[]'::jsonb)`;
}

const date = (v: unknown): Date => new Date(String(v));
const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));

export function snapshotSubmission(s: DeliverySnapshot): SubmissionEntity {
  const r = s.submission;
  return {
    id: r.id as number, formId: r.form_id as number, uuid: r.uuid as string, json: r.json as SubmissionEntity['json'], xml: r.xml as string,
    contentHash: r.content_hash as string, status: r.status as string, submittedById: (r.submitted_by_id as number | null) ?? null,
    version: (r.version as string) ?? '', edited: Boolean(r.edited), bambooDatasetId: (r.bamboo_dataset_id as string) ?? '',
    dateCreated: date(r.date_created), dateModified: date(r.date_modified), deletedAt: dateOrNull(r.deleted_at),
  };
}

export function snapshotAttachments(s: DeliverySnapshot): AttachmentEntity[] {
  return s.attachments.map((a) => ({
    id: a.id as number, submissionId: a.submission_id as number, formId: a.form_id as number, filename: a.filename as string, name: a.name as string,
    mimetype: a.mimetype as string, size: Number(a.size), fieldXpath: (a.field_xpath as string | null) ?? null, dateCreated: date(a.date_created), deletedAt: null,
    variantError: (a.variant_error as string | null) ?? null,
  }));
}

/**
 * The §2.2 object of the snapshot, or for a `deleted` event the submission's identifiers only:
 * `{"_id", "_uuid", "_xform_id_string", "_deleted_at"}` (docs/restservices.md, "Events"). With
 * `reuseAnswers` the snapshot's answers object becomes the §2.2 object (buildSubmissionJson): the
 * returned `submission.json` is then that object, metadata included.
 */
export function snapshotJson(s: DeliverySnapshot, event: DeliveryEvent, form: FormEntity, baseUrl: string, options: { reuseAnswers?: boolean } = {}): { submission: SubmissionEntity; json: SubmissionJson } {
  const submission = snapshotSubmission(s);
  if (event === 'deleted') {
    const deletedAt = submission.deletedAt ?? new Date();
    return { submission, json: { _id: submission.id, _uuid: submission.uuid, _xform_id_string: form.idString, _deleted_at: formatSubmissionTime(deletedAt) } };
  }
  return { submission, json: buildSubmissionJson({ submission, form, attachments: snapshotAttachments(s), submittedBy: s.submitted_by, baseUrl, reuseAnswers: options.reuseAnswers }) };
}
