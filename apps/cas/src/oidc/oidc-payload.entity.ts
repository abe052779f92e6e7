import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One stored oidc-provider model instance (session, grant, code, refresh token, interaction...). */
@Entity({ name: 'oidc_payloads' })
export class OidcPayloadEntity {
  @PrimaryColumn({ type: 'varchar', length: 40 })
  model: string;

  @PrimaryColumn({ type: 'varchar', length: 255 })
  id: string;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  @Column({ name: 'grant_id', type: 'varchar', length: 255, nullable: true })
  grantId: string | null;

  @Column({ name: 'user_code', type: 'varchar', length: 255, nullable: true })
  userCode: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  uid: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'consumed_at', type: 'timestamptz', nullable: true })
  consumedAt: Date | null;
}
