import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, type Repository } from 'typeorm';
import { UserEntity } from './user.entity.js';

export type NewUser = Pick<UserEntity, 'username' | 'email' | 'passwordHash' | 'firstName' | 'lastName' | 'isSuperuser'> &
  Partial<Pick<UserEntity, 'city' | 'country' | 'organization' | 'website' | 'twitter' | 'requireAuth' | 'isActive' | 'casSubject' | 'casClientId' | 'isServiceAccount'>>;

/** Queries on `users`. Usernames compare case-insensitively (unique index on lower(username)). */
@Injectable()
export class UsersRepository {
  constructor(@InjectRepository(UserEntity) private readonly repo: Repository<UserEntity>) {}

  findById(id: number): Promise<UserEntity | null> {
    return this.repo.findOneBy({ id });
  }

  findByUsername(username: string): Promise<UserEntity | null> {
    return this.repo.createQueryBuilder('u').where('lower(u.username) = lower(:username)', { username }).getOne();
  }

  findByCasSubject(casSubject: string): Promise<UserEntity | null> {
    return this.repo.findOneBy({ casSubject });
  }

  findByCasClientId(casClientId: string): Promise<UserEntity | null> {
    return this.repo.findOneBy({ casClientId });
  }

  findByCasSubjects(casSubjects: string[]): Promise<UserEntity[]> {
    return casSubjects.length ? this.repo.findBy({ casSubject: In(casSubjects) }) : Promise.resolve([]);
  }

  /** Service accounts, newest first. */
  listServiceAccounts(): Promise<UserEntity[]> {
    return this.repo.find({ where: { isServiceAccount: true }, order: { id: 'DESC' } });
  }

  /** Inserts; null when the username is taken (the unique index decides, so races are safe). */
  async insert(user: NewUser): Promise<UserEntity | null> {
    const rows = await this.repo
      .createQueryBuilder()
      .insert()
      .into(UserEntity)
      .values(user)
      .orIgnore()
      .returning('*')
      .execute();
    if (!rows.raw?.length) return null;
    return this.findByUsername(user.username);
  }

  async update(id: number, changes: Partial<UserEntity>): Promise<void> {
    await this.repo.update({ id }, changes);
  }

  /**
   * Applies the changes and revokes every credential the account holds, in one transaction:
   * API and temporary tokens, local OAuth access/refresh tokens and unused codes, CAS sign-in
   * sessions, the sheet provider grant; `/o/` login cookies issued before now stop counting
   * (`credentials_reset_at`). OAuth applications stay: without the account's password (or a
   * session) nobody can get a token through them.
   */
  async updateAndRevokeCredentials(id: number, changes: Partial<UserEntity>): Promise<void> {
    await this.repo.manager.transaction(async (m) => {
      await m.update(UserEntity, { id }, changes);
      await m.query(`UPDATE users SET credentials_reset_at = clock_timestamp() WHERE id = $1`, [id]);
      for (const sql of [
        `DELETE FROM api_tokens WHERE user_id = $1`,
        `DELETE FROM temp_tokens WHERE user_id = $1`,
        `UPDATE oauth_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL`,
        `UPDATE oauth_grants SET used_at = now() WHERE user_id = $1 AND used_at IS NULL`,
        `DELETE FROM cas_sessions WHERE user_id = $1`,
        `DELETE FROM sheets_grants WHERE user_id = $1`,
      ]) {
        await m.query(sql, [id]);
      }
    });
  }
}
