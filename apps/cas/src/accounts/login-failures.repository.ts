import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface FailureWindow {
  count: number;
  oldest: Date | null;
}

/** The failed-login log behind the lockout (cas_login_failures). */
@Injectable()
export class LoginFailuresRepository {
  constructor(private readonly ds: DataSource) {}

  async record(username: string, ip: string): Promise<void> {
    await this.ds.query(`INSERT INTO cas_login_failures (username, ip) VALUES ($1, $2)`, [username, ip]);
  }

  async countSince(column: 'username' | 'ip', value: string, since: Date): Promise<FailureWindow> {
    const rows: Array<{ count: string; oldest: Date | null }> = await this.ds.query(
      `SELECT count(*) AS count, min(created_at) AS oldest FROM cas_login_failures WHERE ${column} = $1 AND created_at > $2`,
      [value, since],
    );
    return { count: Number(rows[0].count), oldest: rows[0].oldest };
  }

  async clearUser(username: string): Promise<void> {
    await this.ds.query(`DELETE FROM cas_login_failures WHERE username = $1`, [username]);
  }

  async deleteOlderThan(before: Date): Promise<void> {
    await this.ds.query(`DELETE FROM cas_login_failures WHERE created_at < $1`, [before]);
  }
}
