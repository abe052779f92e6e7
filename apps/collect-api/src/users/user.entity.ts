import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity({ name: 'users' })
export class UserEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 150, unique: true })
  username: string;

  @Column({ type: 'varchar', length: 254, default: '' })
  email: string;

  /** argon2id hash; null for accounts that only sign in through the CAS or are service accounts. */
  @Column({ name: 'password_hash', type: 'varchar', length: 255, nullable: true })
  passwordHash: string | null;

  @Column({ name: 'first_name', type: 'varchar', length: 150, default: '' })
  firstName: string;

  @Column({ name: 'last_name', type: 'varchar', length: 150, default: '' })
  lastName: string;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive: boolean;

  @Column({ name: 'is_superuser', type: 'boolean', default: false })
  isSuperuser: boolean;

  @CreateDateColumn({ name: 'date_joined', type: 'timestamptz' })
  dateJoined: Date;

  // Profile fields shown on /api/v1/user and /api/v1/profiles (migration 1763900000000).
  @Column({ type: 'varchar', length: 255, default: '' })
  city: string;

  @Column({ type: 'varchar', length: 2, default: '' })
  country: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  organization: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  website: string;

  @Column({ type: 'varchar', length: 255, default: '' })
  twitter: string;

  @Column({ name: 'require_auth', type: 'boolean', default: false })
  requireAuth: boolean;

  // Links to the central authentication service (migration 1764300000000, docs/cas-integration.md).
  /** The CAS subject (user id) of an on-boarded CAS user. */
  @Column({ name: 'cas_subject', type: 'varchar', length: 255, nullable: true })
  casSubject: string | null;

  /** The CAS client_id whose client-credentials tokens act as this service account. */
  @Column({ name: 'cas_client_id', type: 'varchar', length: 255, nullable: true })
  casClientId: string | null;

  @Column({ name: 'is_service_account', type: 'boolean', default: false })
  isServiceAccount: boolean;

  /** Credentials issued before this instant were revoked (migration 1764600000000). */
  @Column({ name: 'credentials_reset_at', type: 'timestamptz', nullable: true })
  credentialsResetAt: Date | null;
}
