import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** A file attached to a form (`data_type` `media`), served to ODK clients through the manifest. */
@Entity({ name: 'form_metadata' })
export class FormMediaEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'form_id', type: 'int' })
  formId: number;

  @Column({ name: 'data_type', type: 'varchar', length: 30 })
  dataType: string;

  /** The file name the form refers to (`jr://images/<name>`, `jr://file-csv/<name>`, pulldata's `<name>.csv`). */
  @Column({ name: 'data_value', type: 'varchar', length: 255 })
  dataValue: string;

  /** Storage-relative path of the bytes. */
  @Column({ name: 'data_file', type: 'varchar', length: 1024 })
  dataFile: string;

  @Column({ name: 'data_file_type', type: 'varchar', length: 100 })
  dataFileType: string;

  /** `md5:<hex>`, as the OpenRosa manifest shows it. */
  @Column({ name: 'file_hash', type: 'varchar', length: 40 })
  fileHash: string;

  @Column({ type: 'bigint', transformer: { to: (v: number) => v, from: (v: string | null) => (v === null ? null : Number(v)) } })
  size: number;

  @CreateDateColumn({ name: 'date_created', type: 'timestamptz' })
  dateCreated: Date;
}
