import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * The columns both per-user keys share. Looked up by SHA-256 of the key; the key itself is kept
 * only AES-GCM encrypted under COLLECT_SECRET_KEY, because /api/v1/user must show it again
 * (docs/auth.md).
 */
abstract class UserKeyColumns {
  @PrimaryColumn({ name: 'user_id', type: 'int' })
  userId: number;

  @Column({ name: 'key_hash', type: 'char', length: 64, unique: true })
  keyHash: string;

  @Column({ name: 'key_encrypted', type: 'text' })
  keyEncrypted: string;
}

/** The API token (`Token <key>`), one per user. */
@Entity({ name: 'api_tokens' })
export class ApiTokenEntity extends UserKeyColumns {
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** The temporary token (`TempToken <key>`), one per user; `created_at` starts its expiry clock. */
@Entity({ name: 'temp_tokens' })
export class TempTokenEntity extends UserKeyColumns {
  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
