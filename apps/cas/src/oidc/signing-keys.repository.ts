import { Injectable } from '@nestjs/common';
import { DataSource, IsNull, type EntityManager } from 'typeorm';
import { SigningKeyEntity } from './signing-key.entity.js';

@Injectable()
export class SigningKeysRepository {
  constructor(private readonly ds: DataSource) {}

  /** Runs `fn` holding a cluster-wide lock, so two instances starting together create one key, not two. */
  withLock<T>(fn: (repo: SigningKeysTx) => Promise<T>): Promise<T> {
    return this.ds.transaction(async (em) => {
      await em.query(`SELECT pg_advisory_xact_lock(hashtext('cas_signing_keys'))`);
      return fn(new SigningKeysTx(em));
    });
  }

  /** Keys still in the JWKS, the signing (non-retired, newest) one first. */
  published(now = new Date()): Promise<SigningKeyEntity[]> {
    return new SigningKeysTx(this.ds.manager).published(now);
  }

  all(): Promise<SigningKeyEntity[]> {
    return this.ds.getRepository(SigningKeyEntity).find({ order: { createdAt: 'DESC' } });
  }
}

export class SigningKeysTx {
  constructor(private readonly em: EntityManager) {}

  published(now: Date): Promise<SigningKeyEntity[]> {
    return this.em
      .getRepository(SigningKeyEntity)
      .createQueryBuilder('k')
      .where('k.retired_at IS NULL OR k.publish_until > :now', { now })
      .orderBy('k.retired_at IS NULL', 'DESC')
      .addOrderBy('k.created_at', 'DESC')
      .getMany();
  }

  active(): Promise<SigningKeyEntity | null> {
    return this.em.getRepository(SigningKeyEntity).findOne({ where: { retiredAt: IsNull() }, order: { createdAt: 'DESC' } });
  }

  all(): Promise<SigningKeyEntity[]> {
    return this.em.getRepository(SigningKeyEntity).find({ order: { createdAt: 'ASC' } });
  }

  async setPrivateKey(kid: string, privateKeyEnc: string): Promise<void> {
    await this.em.getRepository(SigningKeyEntity).update({ kid }, { privateKeyEnc });
  }

  insert(key: Partial<SigningKeyEntity>): Promise<SigningKeyEntity> {
    const repo = this.em.getRepository(SigningKeyEntity);
    return repo.save(repo.create(key));
  }

  async retireAllActive(at: Date, publishUntil: Date): Promise<string[]> {
    return kids(
      await this.em.query(`UPDATE cas_signing_keys SET retired_at = $1, publish_until = $2 WHERE retired_at IS NULL RETURNING kid`, [at, publishUntil]),
    );
  }

  async deleteExpired(now: Date): Promise<string[]> {
    return kids(await this.em.query(`DELETE FROM cas_signing_keys WHERE retired_at IS NOT NULL AND publish_until <= $1 RETURNING kid`, [now]));
  }
}

/** TypeORM answers UPDATE/DELETE ... RETURNING on postgres with [rows, affectedCount]. */
function kids(result: unknown): string[] {
  const rows = (Array.isArray(result) && Array.isArray(result[0]) ? result[0] : result) as Array<{ kid: string }>;
  return rows.map((r) => r.kid);
}
