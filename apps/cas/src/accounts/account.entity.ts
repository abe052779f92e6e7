import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A user registered centrally; applications on-board them by id (the token `sub`). */
@Entity({ name: 'cas_accounts' })
export class AccountEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'varchar', length: 150, unique: true })
  username: string;

  @Column({ type: 'varchar', length: 254, default: '' })
  email: string;

  @Column({ name: 'given_name', type: 'varchar', length: 150, default: '' })
  givenName: string;

  @Column({ name: 'family_name', type: 'varchar', length: 150, default: '' })
  familyName: string;

  /** argon2id hash. */
  @Column({ name: 'password_hash', type: 'varchar', length: 255, nullable: true })
  passwordHash: string | null;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
