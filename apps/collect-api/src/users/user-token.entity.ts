import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * The API token (`Token <key>`) and the temporary token (`TempToken <key>`): one of each per
 * user. Looked up by SHA-256 of the key; the key itself is kept only AES-GCM encrypted under
 * COLLECT_SECRET_KEY, because /api/v1/user must show it again (decisions.md §Users, tokens).
 */
@Entity({ name: 'api_tokens' })
export class ApiTokenEntity {
  @PrimaryColumn({ name: 'user_id', type: 'int' })
  userId: number;

  @Column({ name: 'key_hash', type: 'char', length: 64, unique: true })
  keyHash: string;

  @Column({ name: 'key_encrypted', type: 'text' })
  keyEncrypted: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

@Entity({ name: 'temp_tokens' })
export class TempTokenEntity {
  @PrimaryColumn({ name: 'user_id', type: 'int' })
  userId: number;

  @Column({ name: 'key_hash', type: 'char', length: 64, unique: true })
  keyHash: string;

  @Column({ name: 'key_encrypted', type: 'text' })
  keyEncrypted: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
