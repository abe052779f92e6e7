import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A flattened submission record: xpath keys (`group/q`) to string values; repeats are arrays of records. */
export type SubmissionRecord = { [xpath: string]: string | SubmissionRecord[] };

@Entity({ name: 'submissions' })
export class SubmissionEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'form_id', type: 'int' })
  formId: number;

  /** meta/instanceID without the `uuid:` prefix; unique per form (idempotent re-submission). */
  @Column({ type: 'varchar', length: 255 })
  uuid: string;

  /** The answers, flattened by xpath, values as strings (the form fields of the §2.2 payload). */
  @Column({ type: 'jsonb' })
  json: SubmissionRecord;

  /** The instance XML as received (OpenRosa) or rendered (JSON submissions). */
  @Column({ type: 'text' })
  xml: string;

  /** sha256 of the canonical JSON: tells an identical re-submission from a conflicting one. */
  @Column({ name: 'content_hash', type: 'varchar', length: 64 })
  contentHash: string;

  @Column({ type: 'varchar', length: 50, default: 'submitted_via_web' })
  status: string;

  @Column({ name: 'submitted_by_id', type: 'int', nullable: true })
  submittedById: number | null;

  @Column({ type: 'varchar', length: 100, default: '' })
  version: string;

  @Column({ type: 'boolean', default: false })
  edited: boolean;

  /** The dataset-service identifier (`_bamboo_dataset_id`), set by that forwarder. */
  @Column({ name: 'bamboo_dataset_id', type: 'varchar', length: 100, default: '' })
  bambooDatasetId: string;

  @CreateDateColumn({ name: 'date_created', type: 'timestamptz' })
  dateCreated: Date;

  @UpdateDateColumn({ name: 'date_modified', type: 'timestamptz' })
  dateModified: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}

@Entity({ name: 'attachments' })
export class AttachmentEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'submission_id', type: 'int' })
  submissionId: number;

  @Column({ name: 'form_id', type: 'int' })
  formId: number;

  /** Storage-relative path: `{username}/attachments/{formid}_{id_string}/{file}`. */
  @Column({ type: 'varchar', length: 500 })
  filename: string;

  /** The name the client gave (the value of the media question). */
  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ type: 'varchar', length: 100 })
  mimetype: string;

  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string | null) => (v === null ? null : Number(v)) } })
  size: number;

  /** xpath of the question whose answer names this file; null when none does. */
  @Column({ name: 'field_xpath', type: 'varchar', length: 255, nullable: true })
  fieldXpath: string | null;

  @CreateDateColumn({ name: 'date_created', type: 'timestamptz' })
  dateCreated: Date;

  /** Set when the submission is deleted (attachments hidden) or replaced by an edit. */
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;

  /** Why no image variant could be made of this file; set once, then answered without decoding again. */
  @Column({ name: 'variant_error', type: 'varchar', length: 255, nullable: true })
  variantError: string | null;
}
