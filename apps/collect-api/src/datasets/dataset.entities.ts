import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** One filter of a dataview query (docs/api-conventions.md §Forms and submissions). */
export interface DataviewFilter {
  column: string;
  filter: '=' | '>' | '<' | '>=' | '<=' | '<>' | '!=';
  value: string | number;
  condition?: 'and' | 'or';
}

@Entity({ name: 'merged_datasets' })
export class MergedDatasetEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ name: 'owner_id', type: 'int' })
  ownerId: number;

  @Column({ type: 'varchar', length: 255, nullable: true })
  project: string | null;

  /** Form ids, in the order given. */
  @Column({ name: 'form_ids', type: 'int', array: true })
  formIds: number[];

  @CreateDateColumn({ name: 'date_created', type: 'timestamptz' })
  dateCreated: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}

@Entity({ name: 'dataviews' })
export class DataviewEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ name: 'form_id', type: 'int' })
  formId: number;

  @Column({ name: 'owner_id', type: 'int' })
  ownerId: number;

  @Column({ type: 'varchar', length: 255, nullable: true })
  project: string | null;

  @Column({ type: 'jsonb' })
  columns: string[];

  @Column({ type: 'jsonb' })
  query: DataviewFilter[];

  @CreateDateColumn({ name: 'date_created', type: 'timestamptz' })
  dateCreated: Date;

  @UpdateDateColumn({ name: 'date_modified', type: 'timestamptz' })
  dateModified: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}
