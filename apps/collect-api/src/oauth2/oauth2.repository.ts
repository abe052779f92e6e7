import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, Repository } from 'typeorm';
import { OAuthApplicationEntity, OAuthGrantEntity, OAuthTokenEntity } from './oauth2.entities.js';

/** An access token with the owner fields the Bearer hot path needs, read in one query. */
export interface AccessTokenRow {
  id: number;
  user_id: number;
  username: string;
  is_superuser: boolean;
  is_active: boolean;
  scope: string;
  expires_at: Date;
  revoked_at: Date | null;
}

/** Queries of the local OAuth 2.0 provider. */
@Injectable()
export class OAuth2Repository {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    @InjectRepository(OAuthApplicationEntity) private readonly apps: Repository<OAuthApplicationEntity>,
    @InjectRepository(OAuthGrantEntity) private readonly grants: Repository<OAuthGrantEntity>,
    @InjectRepository(OAuthTokenEntity) private readonly tokens: Repository<OAuthTokenEntity>,
  ) {}

  insertApplication(app: Omit<OAuthApplicationEntity, 'id' | 'createdAt'>): Promise<OAuthApplicationEntity> {
    return this.apps.save(this.apps.create(app));
  }

  findApplicationByClientId(clientId: string): Promise<OAuthApplicationEntity | null> {
    return this.apps.findOneBy({ clientId });
  }

  findApplication(id: number): Promise<OAuthApplicationEntity | null> {
    return this.apps.findOneBy({ id });
  }

  listApplications(userId: number | null): Promise<OAuthApplicationEntity[]> {
    return userId === null ? this.apps.find({ order: { id: 'ASC' } }) : this.apps.find({ where: { userId }, order: { id: 'ASC' } });
  }

  async deleteApplication(id: number): Promise<void> {
    await this.apps.delete({ id });
  }

  insertGrant(grant: Omit<OAuthGrantEntity, 'id' | 'createdAt' | 'usedAt'>): Promise<OAuthGrantEntity> {
    return this.grants.save(this.grants.create({ ...grant, usedAt: null }));
  }

  findGrantByCodeHash(codeHash: string): Promise<OAuthGrantEntity | null> {
    return this.grants.findOneBy({ codeHash });
  }

  /** Marks a code used; false when another request used it first (single use under races). */
  async markGrantUsed(id: number): Promise<boolean> {
    const [rows] = await this.ds.query(`UPDATE oauth_grants SET used_at = now() WHERE id = $1 AND used_at IS NULL RETURNING id`, [id]);
    return rows.length === 1;
  }

  insertToken(token: Omit<OAuthTokenEntity, 'id' | 'createdAt' | 'revokedAt'>): Promise<OAuthTokenEntity> {
    return this.tokens.save(this.tokens.create({ ...token, revokedAt: null }));
  }

  findTokenByHash(kind: 'access' | 'refresh', tokenHash: string): Promise<OAuthTokenEntity | null> {
    return this.tokens.findOneBy({ kind, tokenHash });
  }

  async findAccessTokenOwner(tokenHash: string): Promise<AccessTokenRow | null> {
    const rows: AccessTokenRow[] = await this.ds.query(
      `SELECT t.id, t.user_id, t.scope, t.expires_at, t.revoked_at, u.username, u.is_superuser, u.is_active
         FROM oauth_tokens t JOIN users u ON u.id = t.user_id WHERE t.kind = 'access' AND t.token_hash = $1`,
      [tokenHash],
    );
    return rows[0] ?? null;
  }

  /** Revokes one token; false when it was already revoked (a refresh token used twice). */
  async revokeToken(id: number): Promise<boolean> {
    const [rows] = await this.ds.query(`UPDATE oauth_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id`, [id]);
    return rows.length === 1;
  }

  /** Revokes every token descended from one authorization code; returns their hashes. */
  async revokeGrantFamily(grantId: number): Promise<string[]> {
    const [rows] = await this.ds.query(`UPDATE oauth_tokens SET revoked_at = now() WHERE grant_id = $1 AND revoked_at IS NULL RETURNING token_hash`, [grantId]);
    return (rows as Array<{ token_hash: string }>).map((r) => r.token_hash);
  }

  async tokenHashOf(id: number): Promise<string | null> {
    const rows: Array<{ token_hash: string }> = await this.ds.query(`SELECT token_hash FROM oauth_tokens WHERE id = $1`, [id]);
    return rows[0]?.token_hash ?? null;
  }
}
