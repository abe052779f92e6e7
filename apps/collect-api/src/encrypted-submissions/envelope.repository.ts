import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { preparedQuery } from '../database/prepared-query.js';
import { StatementBatches } from '../database/statement-batches.js';
import type { DecryptionFailure } from '../encryption/decryption-failure.js';

export type DecryptionStatus = 'pending' | 'decrypted' | 'failed';

/** One stored envelope (`submission_envelopes`, docs/encryption.md "How an envelope is stored"). */
export interface EnvelopeRow {
  submissionId: number;
  formId: number;
  /** The manifest's `version`, null when it has none. */
  version: string | null;
  /** meta/instanceID without `uuid:` (the submission's `_uuid`). */
  instanceId: string;
  /** keyId() of the public key of the form version the manifest names; null when that version carried none the platform knows. */
  keyId: string | null;
  /** The manifest XML as received. */
  manifest: string;
  /** Part names as the manifest gives them (`.enc` included), in ciphering order: media, then the XML part last. */
  parts: string[];
  decryption: DecryptionStatus;
  decryptionError: DecryptionFailure | null;
  decryptedAt: Date | null;
  createdAt: Date;
}

/** An envelope in a form's listing, with the submission's own metadata. */
export interface EnvelopeListing extends EnvelopeRow {
  uuid: string;
  submissionTime: Date;
  submittedBy: string | null;
}

/** A stored part of an envelope: the attachment row holding its ciphertext. */
export interface EnvelopePart {
  submissionId: number;
  /** The part's name in the manifest (`photo.jpg.enc`, `submission.xml.enc`). */
  name: string;
  attachmentId: number;
  /** Storage-relative path (FileStorage). */
  path: string;
  size: number;
  /** Set once the submission was decrypted on receipt (the part is then hidden from the media listing, its bytes kept). */
  hiddenAt: Date | null;
}

/** A decrypted media file to add as an attachment (its bytes already written at `path`). */
export interface DecryptedAttachment {
  path: string;
  name: string;
  mimetype: string;
  size: number;
  fieldXpath: string | null;
}

/** A new envelope row (EnvelopeRepository.record). */
export type NewEnvelope = Pick<EnvelopeRow, 'submissionId' | 'formId' | 'version' | 'instanceId' | 'keyId' | 'manifest' | 'parts'>;

/** A stored `.enc` part of an envelope stored decrypted (its bytes written at `path`). */
export interface KeptPart {
  path: string;
  name: string;
  mimetype: string;
  size: number;
}

const BATCHES = { maxInFlight: 4, maxItems: 64 };

function envelopeJson(r: NewEnvelope): Record<string, unknown> {
  return { submission_id: r.submissionId, form_id: r.formId, version: r.version, instance_id: r.instanceId, key_id: r.keyId, manifest: r.manifest, parts: r.parts };
}

/**
 * The envelope rows of a batch (a jsonb recordset, fixed texts: prepared statements), each
 * inserted unless its submission has one.
 */
const RECORD_ENVELOPES = `INSERT INTO submission_envelopes (submission_id, form_id, version, instance_id, key_id, manifest, parts)
  SELECT x.submission_id, x.form_id, x.version, x.instance_id, x.key_id, x.manifest, x.parts
  FROM jsonb_to_recordset($1::jsonb) AS x(submission_id int, form_id int, version text, instance_id text, key_id text, manifest text, parts text[])
  ON CONFLICT (submission_id) DO NOTHING`;

/**
 * Envelopes stored decrypted (docs/encryption.md "Server mode"): each row `decrypted`, and, only
 * for the rows it inserted, the attachment rows of their `.enc` parts, hidden from the start.
 * Answers the submission ids whose rows it inserted.
 */
const RECORD_DECRYPTED = `WITH e AS (
    INSERT INTO submission_envelopes (submission_id, form_id, version, instance_id, key_id, manifest, parts, decryption, decrypted_at)
    SELECT x.submission_id, x.form_id, x.version, x.instance_id, x.key_id, x.manifest, x.parts, 'decrypted', now()
    FROM jsonb_to_recordset($1::jsonb) AS x(submission_id int, form_id int, version text, instance_id text, key_id text, manifest text, parts text[])
    ON CONFLICT (submission_id) DO NOTHING RETURNING submission_id),
  p AS (
    INSERT INTO attachments (submission_id, form_id, filename, name, mimetype, size, field_xpath, deleted_at)
    SELECT y.submission_id, y.form_id, y.filename, y.name, y.mimetype, y.size, NULL, now()
    FROM jsonb_to_recordset($2::jsonb) AS y(submission_id int, form_id int, filename text, name text, mimetype text, size bigint)
    WHERE y.submission_id IN (SELECT submission_id FROM e))
  SELECT submission_id FROM e`;

const ENVELOPE_COLUMNS = `e.submission_id, e.form_id, e.version, e.instance_id, e.key_id, e.manifest, e.parts, e.decryption, e.decryption_error, e.decrypted_at, e.created_at`;

interface RawEnvelope {
  submission_id: number;
  form_id: number;
  version: string | null;
  instance_id: string;
  key_id: string | null;
  manifest: string;
  parts: string[];
  decryption: DecryptionStatus;
  decryption_error: DecryptionFailure | null;
  decrypted_at: Date | null;
  created_at: Date;
}

function toRow(r: RawEnvelope): EnvelopeRow {
  return {
    submissionId: r.submission_id, formId: r.form_id, version: r.version, instanceId: r.instance_id, keyId: r.key_id, manifest: r.manifest,
    parts: r.parts, decryption: r.decryption, decryptionError: r.decryption_error, decryptedAt: r.decrypted_at, createdAt: r.created_at,
  };
}

/**
 * Queries on `submission_envelopes` and on the envelope's own rows of `submissions` and
 * `attachments` (docs/encryption.md "How an envelope is stored"). The submission row of an
 * envelope carries the data API's encryption members in its answers (`_encrypted`,
 * `_decryption`, `_decryption_error`), so every read of submissions shows them as they are here.
 */
/** UPDATE ... RETURNING statements are wrapped in a SELECT: TypeORM answers a bare UPDATE with [rows, count]. */
@Injectable()
export class EnvelopeRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Records the envelope of a submission stored as received (`pending`); a later send of the same
   * manifest keeps the first row. Concurrent calls run as one statement (StatementBatches: group
   * commit).
   */
  record(row: NewEnvelope): Promise<void> {
    return this.pending.submit(row);
  }

  /**
   * Records the envelope of a submission stored decrypted (docs/encryption.md "Server mode"):
   * its row `decrypted` and the attachment rows of its `.enc` parts (`parts`, written already),
   * hidden, in one statement, grouped with concurrent calls. False when the envelope had a row
   * already (a repeated send): nothing written, the caller removes the files it wrote.
   */
  recordDecrypted(row: NewEnvelope, parts: KeptPart[]): Promise<boolean> {
    return this.decrypted.submit({ row, parts });
  }

  private readonly pending = new StatementBatches<NewEnvelope, void>(
    async (rows) => {
      await preparedQuery(this.db, RECORD_ENVELOPES, [JSON.stringify(rows.map(envelopeJson))]);
      return rows.map(() => undefined);
    },
    (r) => String(r.submissionId),
    BATCHES,
  );

  private readonly decrypted = new StatementBatches<{ row: NewEnvelope; parts: KeptPart[] }, boolean>(
    async (items) => {
      const parts = items.flatMap(({ row, parts: kept }) => kept.map((k) => ({ submission_id: row.submissionId, form_id: row.formId, filename: k.path, name: k.name, mimetype: k.mimetype, size: k.size })));
      const inserted: Array<{ submission_id: number }> = await preparedQuery(this.db, RECORD_DECRYPTED, [JSON.stringify(items.map((i) => envelopeJson(i.row))), JSON.stringify(parts)]);
      const ids = new Set(inserted.map((r) => r.submission_id));
      return items.map((i) => ids.has(i.row.submissionId));
    },
    (i) => String(i.row.submissionId),
    BATCHES,
  );

  async find(submissionId: number, m?: EntityManager): Promise<EnvelopeRow | null> {
    const rows: RawEnvelope[] = await (m ?? this.db).query(`SELECT ${ENVELOPE_COLUMNS} FROM submission_envelopes e WHERE e.submission_id = $1`, [submissionId]);
    return rows[0] ? toRow(rows[0]) : null;
  }

  /** The envelopes among `submissionIds` (any form), by submission id. */
  async findMany(submissionIds: number[]): Promise<Map<number, EnvelopeRow>> {
    if (!submissionIds.length) return new Map();
    const rows: RawEnvelope[] = await this.db.query(`SELECT ${ENVELOPE_COLUMNS} FROM submission_envelopes e WHERE e.submission_id = ANY($1::int[])`, [submissionIds]);
    return new Map(rows.map((r) => [r.submission_id, toRow(r)]));
  }

  /**
   * A page of a form's envelopes, oldest first, after submission `afterId`: the first `limit`
   * envelopes by id (`decryption` narrows to one status), of which those of live submissions are
   * given; `next` is the id to go on after, null once the form has no more. The page is chosen
   * on submission_envelopes alone, by id only, and its rows then looked up id by id, the deleted
   * ones left out here: before autovacuum's ANALYZE has seen a burst of intake (a new form's
   * first thousands), the planner takes a form's envelopes for a handful, and the one statement
   * this was (a join filtered on `deleted_at`, sorted) read every envelope after `afterId` with
   * its submission, 14 ms a page at 3,000 envelopes and growing with the form; this way, 1 to 3
   * ms for the ids and 2 ms for the rows (docs/encryption.md, "Decrypting without a server-held
   * key").
   */
  async pageByForm(formId: number, o: { afterId?: number; limit: number; decryption?: DecryptionStatus }): Promise<{ rows: EnvelopeListing[]; next: number | null }> {
    const ids: Array<{ submission_id: number }> = await this.db.query(
      `SELECT e.submission_id FROM submission_envelopes e
       WHERE e.form_id = $1 AND e.submission_id > $2 AND ($4::varchar IS NULL OR e.decryption = $4)
       ORDER BY e.submission_id LIMIT $3`,
      [formId, o.afterId ?? 0, o.limit, o.decryption ?? null],
    );
    if (!ids.length) return { rows: [], next: null };
    const rows: Array<RawEnvelope & { uuid: string; date_created: Date; username: string | null; live: boolean }> = await this.db.query(
      `SELECT ${ENVELOPE_COLUMNS}, s.uuid, s.date_created, u.username, s.deleted_at IS NULL AS live
       FROM unnest($1::int[]) AS p(id) JOIN submission_envelopes e ON e.submission_id = p.id JOIN submissions s ON s.id = p.id
       LEFT JOIN users u ON u.id = s.submitted_by_id
       ORDER BY e.submission_id`,
      [ids.map((r) => r.submission_id)],
    );
    return {
      rows: rows.filter((r) => r.live).map((r) => ({ ...toRow(r), uuid: r.uuid, submissionTime: r.date_created, submittedBy: r.username })),
      next: ids.length < o.limit ? null : ids[ids.length - 1]!.submission_id,
    };
  }

  /**
   * The stored parts of these envelopes: per submission and part name the attachment holding it
   * (a live row before a hidden one, then the first stored). Parts not received are absent.
   */
  async partsOf(submissionIds: number[], m?: EntityManager): Promise<EnvelopePart[]> {
    if (!submissionIds.length) return [];
    const rows: Array<{ submission_id: number; name: string; id: number; filename: string; size: string; deleted_at: Date | null }> = await (m ?? this.db).query(
      // Driven by the ids, one index lookup each, whatever the statistics say of the tables (pageByForm).
      `SELECT DISTINCT ON (a.submission_id, a.name) a.submission_id, a.name, a.id, a.filename, a.size, a.deleted_at
       FROM unnest($1::int[]) AS p(id) JOIN submission_envelopes e ON e.submission_id = p.id
       JOIN attachments a ON a.submission_id = p.id AND a.name = ANY(e.parts)
       ORDER BY a.submission_id, a.name, a.deleted_at NULLS FIRST, a.id`,
      [submissionIds],
    );
    return rows.map((r) => ({ submissionId: r.submission_id, name: r.name, attachmentId: r.id, path: r.filename, size: Number(r.size), hiddenAt: r.deleted_at }));
  }

  /** The XForm of one version of a form (null: no such version). */
  async versionXml(formId: number, version: string): Promise<string | null> {
    const rows: Array<{ xml: string }> = await this.db.query(`SELECT xml FROM form_versions WHERE form_id = $1 AND version = $2`, [formId, version]);
    return rows[0]?.xml ?? null;
  }

  /** Owner's username of a form (storage paths of decrypted media). */
  async ownerName(formId: number): Promise<string | null> {
    const rows: Array<{ username: string }> = await this.db.query(`SELECT u.username FROM forms f JOIN users u ON u.id = f.owner_id WHERE f.id = $1`, [formId]);
    return rows[0]?.username ?? null;
  }

  /** A decryption that failed: the reason on the envelope and in the submission's `_decryption_error`. */
  async markFailed(submissionId: number, failure: DecryptionFailure): Promise<void> {
    await this.db.transaction(async (m) => {
      const updated: unknown[] = await m.query(
        `WITH u AS (UPDATE submission_envelopes SET decryption = 'failed', decryption_error = $2::jsonb WHERE submission_id = $1 AND decryption = 'pending' RETURNING 1) SELECT 1 FROM u`,
        [submissionId, JSON.stringify(failure)],
      );
      if (!updated.length) return;
      await m.query(
        `UPDATE submissions SET json = json || jsonb_build_object('_decryption', 'failed', '_decryption_error', $2::text), date_modified = now() WHERE id = $1`,
        [submissionId, failure.reason],
      );
    });
  }

  /**
   * A decryption on receipt that succeeded, in one transaction: the submission's answers become
   * the decrypted ones (with `_encrypted` and `_decryption`), its XML the decrypted instance, its
   * decrypted media attachments, and the `.enc` parts are hidden (kept, with their bytes). False
   * when the envelope was no longer pending (another process decrypted it first): nothing written.
   */
  async markDecrypted(submissionId: number, d: { json: Record<string, unknown>; xml: string; media: DecryptedAttachment[] }): Promise<boolean> {
    return this.db.transaction(async (m) => {
      const envelope: Array<{ form_id: number; parts: string[] }> = await m.query(
        `WITH u AS (UPDATE submission_envelopes SET decryption = 'decrypted', decrypted_at = now() WHERE submission_id = $1 AND decryption = 'pending' RETURNING form_id, parts)
         SELECT form_id, parts FROM u`,
        [submissionId],
      );
      if (!envelope.length) return false;
      const { form_id: formId, parts } = envelope[0]!;
      await m.query(`UPDATE submissions SET json = $2::jsonb, xml = $3, date_modified = now() WHERE id = $1`, [submissionId, JSON.stringify(d.json), d.xml]);
      await m.query(`UPDATE attachments SET deleted_at = now() WHERE submission_id = $1 AND name = ANY($2::text[]) AND deleted_at IS NULL`, [submissionId, parts]);
      for (const a of d.media) {
        await m.query(
          `INSERT INTO attachments (submission_id, form_id, filename, name, mimetype, size, field_xpath) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [submissionId, formId, a.path, a.name, a.mimetype, a.size, a.fieldXpath],
        );
      }
      return true;
    });
  }
}
