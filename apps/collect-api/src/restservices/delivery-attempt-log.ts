import { Injectable } from '@nestjs/common';
import { RestServicesRepository, type AttemptRecord } from './restservices.repository.js';

/**
 * Writes the ends of attempts in batches (group commit): while one statement is on its way,
 * the attempts that end meanwhile gather and go together in the next one. A delivery's job
 * completes only once its own entry is written, so a crash never loses a finished attempt's
 * record (the row stays leased and is retried, at least once as before). One attempt alone is
 * written at once: batching adds no wait (docs/restservices.md, "Connections and batches").
 */
@Injectable()
export class DeliveryAttemptLog {
  private pending: Array<{ record: AttemptRecord; done: (err?: unknown) => void }> = [];
  private writing = false;

  constructor(private readonly repo: RestServicesRepository) {}

  record(record: AttemptRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ record, done: (err) => (err ? reject(err as Error) : resolve()) });
      if (!this.writing) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.pending.length) {
        const batch = this.pending.splice(0, 500);
        try {
          await this.repo.recordAttempts(batch.map((b) => b.record));
          for (const b of batch) b.done();
        } catch (err) {
          for (const b of batch) b.done(err);
        }
      }
    } finally {
      this.writing = false;
    }
  }
}
