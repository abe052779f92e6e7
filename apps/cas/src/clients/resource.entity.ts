import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A protected application: its name is the `aud` of the access tokens issued for it. */
@Entity({ name: 'cas_resources' })
export class ResourceEntity {
  @PrimaryColumn({ type: 'varchar', length: 200 })
  name: string;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  scopes: string[];

  /** Lifetime of access tokens for this resource; null = CAS_ACCESS_TOKEN_TTL. */
  @Column({ name: 'access_token_ttl', type: 'integer', nullable: true })
  accessTokenTtl: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
