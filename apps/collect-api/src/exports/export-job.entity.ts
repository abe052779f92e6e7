import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type ExportJobFormat = 'csv' | 'xlsx' | 'zip';
export type ExportJobStatus = 'pending' | 'running' | 'done' | 'failed';

/** An asynchronous export (`POST /api/v1/export`, docs/exports.md): its request, state and stored file. */
@Entity({ name: 'export_jobs' })
export class ExportJobEntity {
  /** Random (uuid v4): an export's address reveals nothing about others. */
  @PrimaryColumn({ type: 'uuid' })
  id: string;

  /** Only this user sees the export and downloads it. */
  @Column({ name: 'owner_id', type: 'int' })
  ownerId: number;

  /** The form exported; null for an entity list's export. */
  @Column({ name: 'form_id', type: 'int', nullable: true })
  formId: number | null;

  /** The entity list exported (csv, xlsx: docs/entities.md, "Exports of a list"); null for a form's. */
  @Column({ name: 'entity_list_id', type: 'int', nullable: true })
  entityListId: number | null;

  @Column({ type: 'varchar', length: 10 })
  format: ExportJobFormat;

  /** The CSV/XLSX options (export.dto.ts) the export was asked with. */
  @Column({ type: 'jsonb', default: () => `'{}'` })
  options: Record<string, unknown>;

  @Column({ type: 'varchar', length: 10, default: 'pending' })
  status: ExportJobStatus;

  /** 0..1. */
  @Column({ type: 'real', default: 0 })
  progress: number;

  /** Storage path of the finished file. */
  @Column({ type: 'varchar', length: 500, nullable: true })
  path: string | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** Bytes of the written file (migration 1765100000001): what counts against EXPORT_STORAGE_QUOTA_BYTES. */
  @Column({ type: 'bigint', nullable: true, transformer: { to: (v: number | null) => v, from: (v: string | null) => (v === null ? null : Number(v)) } })
  size: number | null;

  @CreateDateColumn({ name: 'date_created', type: 'timestamptz' })
  dateCreated: Date;

  /** After this the export answers 404 and its file is removed. */
  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}
