import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import type { DataSource, EntityManager, Repository } from 'typeorm';
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

/** A new access/refresh pair, hashed, as the service issues it. */
export interface IssuedTokens {
  applicationId: number;
  userId: number;
  scope: string;
  accessHash: string;
  refreshHash: string;
  accessExpiresAt: Date;
}

/** What a code redemption or a refresh rotation did; `revokedHashes` are access/refresh hashes to drop from caches. */
export interface TokenExchange {
  kind: 'issued' | 'reused';
  revokedHashes: string[];
}

async function revokeFamily(m: EntityManager, grantId: number): Promise<string[]> {
  const [rows] = await m.query(`UPDATE oauth_tokens SET revoked_at = now() WHERE grant_id = $1 AND revoked_at IS NULL RETURNING token_hash`, [grantId]);
  return (rows as Array<{ token_hash: string }>).map((r) => r.token_hash);
}

async function insertPair(m: EntityManager, grantId: number, t: IssuedTokens): Promise<void> {
  await m.query(
    `WITH access AS (
       INSERT INTO oauth_tokens (kind, token_hash, application_id, user_id, grant_id, pair_id, scope, expires_at)
       VALUES ('access', $1, $3, $4, $5, NULL, $6, $7) RETURNING id)
     INSERT INTO oauth_tokens (kind, token_hash, application_id, user_id, grant_id, pair_id, scope, expires_at)
     SELECT 'refresh', $2, $3, $4, $5, access.id, $6, NULL FROM access`,
    [t.accessHash, t.refreshHash, t.applicationId, t.userId, grantId, t.scope, t.accessExpiresAt],
  );
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

  /**
   * Redeems a code: marks it used and stores the tokens it issues in one transaction, so a code seen
   * used always has its tokens stored. A concurrent redemption's UPDATE waits on this row's lock;
   * once the winner commits it matches no row, and its family revocation (a later statement, a fresh
   * snapshot under READ COMMITTED) sees and revokes the winner's tokens (docs/security.md).
   */
  redeemCode(grantId: number, issued: IssuedTokens): Promise<TokenExchange> {
    return this.ds.transaction(async (m) => {
      const [used] = await m.query(`UPDATE oauth_grants SET used_at = now() WHERE id = $1 AND used_at IS NULL RETURNING id`, [grantId]);
      if (used.length === 0) return { kind: 'reused', revokedHashes: await revokeFamily(m, grantId) };
      await insertPair(m, grantId, issued);
      return { kind: 'issued', revokedHashes: [] };
    });
  }

  /**
   * Rotates a refresh token: revokes it and the access token issued with it, and stores the new pair,
   * in one transaction that first locks the family's grant row. Concurrent rotations of one family
   * run one after the other; the one that finds the token already revoked ends the whole family,
   * the winner's new pair included.
   */
  rotateRefreshToken(token: Pick<OAuthTokenEntity, 'id' | 'grantId' | 'pairId'>, issued: IssuedTokens): Promise<TokenExchange> {
    return this.ds.transaction(async (m) => {
      await m.query(`SELECT id FROM oauth_grants WHERE id = $1 FOR UPDATE`, [token.grantId]);
      const [revoked] = await m.query(`UPDATE oauth_tokens SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id`, [token.id]);
      if (revoked.length === 0) return { kind: 'reused', revokedHashes: await revokeFamily(m, token.grantId) };
      const pair: Array<{ token_hash: string }> =
        token.pairId === null ? [] : (await m.query(`UPDATE oauth_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING token_hash`, [token.pairId]))[0];
      await insertPair(m, token.grantId, issued);
      return { kind: 'issued', revokedHashes: pair.map((r) => r.token_hash) };
    });
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

  /** Revokes every token descended from one authorization code; returns their hashes. */
  revokeGrantFamily(grantId: number): Promise<string[]> {
    return revokeFamily(this.ds.manager, grantId);
  }
}
