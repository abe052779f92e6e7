import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { SubmissionRecord } from '../submissions/submission.entity.js';

/** A live submission that may be listed, with the names of its live attachments. */
export interface ListCandidate {
  id: number;
  uuid: string;
  /** The answers, read only when the form has media questions (to tell which files it names). */
  json: SubmissionRecord | null;
  attachment_names: string[];
}

export interface PulledSubmission {
  id: number;
  uuid: string;
  xml: string;
  date_created: Date;
}

export interface PulledAttachment {
  id: number;
  filename: string;
  name: string;
}

/** Reads of the Briefcase pull (docs/encryption.md "Briefcase pull"): live submissions and attachments of one form. */
@Injectable()
export class BriefcaseRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /**
   * Live submissions of the form after `afterId`, oldest first (by id), at most `limit`: one
   * statement on the (form_id, id) order, the attachment names aggregated per row.
   */
  candidates(formId: number, afterId: number, limit: number, read: { json: boolean }): Promise<ListCandidate[]> {
    return this.db.query(
      `SELECT s.id, s.uuid, ${read.json ? 's.json' : 'NULL::jsonb AS json'},
         COALESCE((SELECT array_agg(a.name) FROM attachments a WHERE a.submission_id = s.id AND a.deleted_at IS NULL), '{}') AS attachment_names
       FROM submissions s
       WHERE s.form_id = $1 AND s.deleted_at IS NULL AND s.id > $2
       ORDER BY s.id LIMIT $3`,
      [formId, afterId, limit],
    );
  }

  async findLive(formId: number, uuid: string): Promise<PulledSubmission | null> {
    const rows: PulledSubmission[] = await this.db.query(
      `SELECT id, uuid, xml, date_created FROM submissions WHERE form_id = $1 AND uuid = $2 AND deleted_at IS NULL ORDER BY id LIMIT 1`,
      [formId, uuid],
    );
    return rows[0] ?? null;
  }

  liveAttachments(submissionId: number): Promise<PulledAttachment[]> {
    return this.db.query(`SELECT id, filename, name FROM attachments WHERE submission_id = $1 AND deleted_at IS NULL ORDER BY id`, [submissionId]);
  }
}
