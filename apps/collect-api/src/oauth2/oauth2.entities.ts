import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type ClientType = 'confidential' | 'public';

/** A validated registration (CreateOAuthApplicationDto, or the admin command's arguments). */
export interface NewApplication {
  name: string;
  clientType: ClientType;
  redirectUris: string[];
}

/** A client application of the local OAuth 2.0 provider (`/o/`). */
@Entity({ name: 'oauth_applications' })
export class OAuthApplicationEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'client_id', type: 'varchar', length: 100, unique: true })
  clientId: string;

  /** SHA-256 of the secret (256 random bits, so no slow hash needed); null for public clients. */
  @Column({ name: 'client_secret_hash', type: 'char', length: 64, nullable: true })
  clientSecretHash: string | null;

  @Column({ type: 'varchar', length: 255 })
  name: string;

  @Column({ name: 'client_type', type: 'varchar', length: 32 })
  clientType: ClientType;

  @Column({ name: 'authorization_grant_type', type: 'varchar', length: 32 })
  authorizationGrantType: string;

  /** Space-separated, as the DRF-world providers store them. */
  @Column({ name: 'redirect_uris', type: 'text' })
  redirectUris: string;

  @Column({ name: 'user_id', type: 'int', nullable: true })
  userId: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** An authorization code (single use, short-lived); also the family id of the tokens it yields. */
@Entity({ name: 'oauth_grants' })
export class OAuthGrantEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ name: 'code_hash', type: 'char', length: 64, unique: true })
  codeHash: string;

  @Column({ name: 'application_id', type: 'int' })
  applicationId: number;

  @Column({ name: 'user_id', type: 'int' })
  userId: number;

  @Column({ name: 'redirect_uri', type: 'text' })
  redirectUri: string;

  /** Whether the authorize request named redirect_uri; then the token request must repeat it. */
  @Column({ name: 'redirect_uri_given', type: 'boolean' })
  redirectUriGiven: boolean;

  @Column({ type: 'varchar', length: 255 })
  scope: string;

  @Column({ name: 'code_challenge', type: 'varchar', length: 128, nullable: true })
  codeChallenge: string | null;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'used_at', type: 'timestamptz', nullable: true })
  usedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

/** Access and refresh tokens, hashed. `grant_id` groups every token descended from one code. */
@Entity({ name: 'oauth_tokens' })
export class OAuthTokenEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 16 })
  kind: 'access' | 'refresh';

  @Column({ name: 'token_hash', type: 'char', length: 64, unique: true })
  tokenHash: string;

  @Column({ name: 'application_id', type: 'int' })
  applicationId: number;

  @Column({ name: 'user_id', type: 'int' })
  userId: number;

  @Column({ name: 'grant_id', type: 'int' })
  grantId: number;

  /** For a refresh token: the access token issued with it (revoked when it is used). */
  @Column({ name: 'pair_id', type: 'int', nullable: true })
  pairId: number | null;

  @Column({ type: 'varchar', length: 255 })
  scope: string;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
