import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * An RS256 signing key. The newest key without `retired_at` signs; a retired key stays in the
 * JWKS until `publish_until` (the longest lifetime of a token it may have signed).
 */
@Entity({ name: 'cas_signing_keys' })
export class SigningKeyEntity {
  @PrimaryColumn({ type: 'varchar', length: 100 })
  kid: string;

  @Column({ type: 'varchar', length: 10 })
  alg: string;

  @Column({ name: 'public_jwk', type: 'jsonb' })
  publicJwk: Record<string, string>;

  /** AES-256-GCM of the private JWK (see key-encryption.ts). */
  @Column({ name: 'private_key_enc', type: 'text' })
  privateKeyEnc: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'retired_at', type: 'timestamptz', nullable: true })
  retiredAt: Date | null;

  @Column({ name: 'publish_until', type: 'timestamptz', nullable: true })
  publishUntil: Date | null;
}
