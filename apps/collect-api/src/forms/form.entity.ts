import { Column, CreateDateColumn, Entity, PrimaryColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { FormRole } from './roles.js';

/**
 * One question (or group/repeat) of a form, in form order. `xpath` is the path without the
 * form's root element (`group/photo`), the key the submission JSON uses.
 */
export interface FormField {
  name: string;
  xpath: string;
  /** XForm/XLSForm type: text, integer, decimal, select one, geopoint, image, audio, video, file, group, repeat, ... */
  type: string;
  label: string | null;
  /** Set on fields inside a repeat: the xpath of the innermost repeat. */
  repeat?: string;
}

/**
 * The columns of a form definition: on the form (its current definition) and on each of its
 * versions (`form_versions`, docs/forms.md "Form versions").
 */
export abstract class FormDefinitionColumns {
  @Column({ type: 'varchar', length: 255 })
  title: string;

  /** Root element of the primary instance (the submission XML root). */
  @Column({ name: 'root_name', type: 'varchar', length: 100 })
  rootName: string;

  @Column({ type: 'varchar', length: 100, default: '' })
  version: string;

  /** The XForm document as uploaded (with formhub/uuid), or the one rendered from a JSON definition. */
  @Column({ type: 'text' })
  xml: string;

  /** The JSON definition when the form was created from one; null for XForm and XLSForm uploads. */
  @Column({ name: 'json_definition', type: 'jsonb', nullable: true })
  jsonDefinition: Record<string, unknown> | null;

  @Column({ type: 'jsonb' })
  fields: FormField[];
}

@Entity({ name: 'forms' })
export class FormEntity extends FormDefinitionColumns {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'uuid' })
  uuid: string;

  @Column({ name: 'id_string', type: 'varchar', length: 100 })
  idString: string;

  @Column({ name: 'owner_id', type: 'int' })
  ownerId: number;

  /** Whether the form accepts submissions (onadata's `downloadable`). */
  @Column({ name: 'accepting_submissions', type: 'boolean', default: true })
  acceptingSubmissions: boolean;

  /**
   * The form's dataset id at a dataset service (`_bamboo_dataset_id` of every submission):
   * configured on the service, or answered by it (docs/restservices.md, "`_bamboo_dataset_id`").
   */
  @Column({ name: 'bamboo_dataset_id', type: 'varchar', length: 100, default: '' })
  bambooDatasetId: string;

  @CreateDateColumn({ name: 'date_created', type: 'timestamptz' })
  dateCreated: Date;

  @UpdateDateColumn({ name: 'date_modified', type: 'timestamptz' })
  dateModified: Date;

  /** Soft delete: a deleted form is invisible everywhere (404) but its rows stay. */
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}

/** A user's role on a form. The owner also has a row (`owner`), so one query answers every check. */
@Entity({ name: 'form_roles' })
export class FormRoleEntity {
  @PrimaryColumn({ name: 'form_id', type: 'int' })
  formId: number;

  @PrimaryColumn({ name: 'user_id', type: 'int' })
  userId: number;

  @Column({ type: 'varchar', length: 20 })
  role: FormRole;

  /** When the user got a role on the form (migration 1764600000001); a role change keeps it. */
  @Column({ name: 'granted_at', type: 'timestamptz', default: () => 'now()' })
  grantedAt: Date;
}

/**
 * One definition a form has had (migration 1764710000000), the current one included: what
 * data-out reads to keep the columns of older versions (docs/forms.md, "Form versions").
 */
@Entity({ name: 'form_versions' })
export class FormVersionEntity extends FormDefinitionColumns {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'form_id', type: 'int' })
  formId: number;

  /**
   * The choices of the definition's select questions (openrosa/xform-choices.ts), read from its
   * XForm when it was stored (migration 1765100000000): exports read these, never the XForm.
   */
  @Column({ type: 'jsonb', nullable: true })
  choices: Record<string, Array<{ value: string; label: string | null }>> | null;

  @CreateDateColumn({ name: 'date_created', type: 'timestamptz' })
  dateCreated: Date;
}
