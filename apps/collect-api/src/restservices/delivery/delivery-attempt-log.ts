import { Injectable } from '@nestjs/common';
import { RestServicesRepository, type AttemptRecord } from '../restservices.repository.js';

/**
 * How long an attempt's end may wait for the other sends of its claim before it is written.
 * A claim's requests go out together and their answers come back within about a millisecond
 * of each other; written at once, the first answer went alone and the rest in a second
 * statement (0.29 attempt writes per forwarded submission for 0.16 claims;
 * docs/restservices.md, "Connections and batches (the worker's hot path)"). The bound keeps a slow or hung
 * send from holding the others' ends.
 */
export const ATTEMPT_LINGER_MS = 2;
const MAX_BATCH = 500;

/** The sends of one claim whose ends have not come yet. */
interface Claim {
  left: number;
}

interface Pending {
  record: AttemptRecord;
  claim: Claim | undefined;
  at: number;
  done: (err?: unknown) => void;
}

/**
 * Writes the ends of attempts in batches (group commit): while one statement is on its way,
 * the attempts that end meanwhile gather and go together in the next one. Before a statement
 * starts it waits for the other sends of the claims its entries came from (`expect`), until
 * each of them ended (its attempt recorded, or the row released or finished without an
 * attempt) or ATTEMPT_LINGER_MS passed since the oldest entry came, whichever is first; an
 * attempt whose claim has nothing else in flight (a lone submission) is written at once.
 * A delivery's job completes only once its own entry is written, so a crash never loses a
 * finished attempt's record (the row stays leased and is retried, at least once as before)
 * (docs/restservices.md, "Connections and batches").
 */
@Injectable()
export class DeliveryAttemptLog {
  private pending: Pending[] = [];
  private writing = false;
  private timer: NodeJS.Timeout | null = null;
  /** Rows of claims in flight, by id: the claim whose other sends an entry waits for. */
  private readonly claims = new Map<number, Claim>();
  /** ATTEMPT_LINGER_MS; the tests set it so that no outcome depends on the machine's speed. */
  protected lingerMs = ATTEMPT_LINGER_MS;

  constructor(private readonly repo: RestServicesRepository) {}

  /** The rows of one claim, about to be sent together: their ends are written together. */
  expect(rowIds: readonly number[]): void {
    if (rowIds.length < 2) return;
    const claim: Claim = { left: rowIds.length };
    for (const id of rowIds) this.claims.set(id, claim);
  }

  /** A send of a claimed row ended without an attempt entry (released, finished, failed): none to wait for. */
  ended(rowId: number): void {
    if (this.end(rowId)) this.kick();
  }

  record(record: AttemptRecord): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const claim = this.claims.get(record.deliveryRowId);
      this.end(record.deliveryRowId);
      this.pending.push({ record, claim, at: performance.now(), done: (err) => (err ? reject(err as Error) : resolve()) });
      this.kick();
    });
  }

  private end(rowId: number): boolean {
    const claim = this.claims.get(rowId);
    if (!claim) return false;
    this.claims.delete(rowId);
    claim.left--;
    return true;
  }

  /** Writes now, or once the pending entries' claims ended or the oldest waited long enough. */
  private kick(): void {
    if (this.writing || !this.pending.length) return;
    const wait = this.pending[0].at + this.lingerMs - performance.now();
    if (wait > 0 && this.pending.some((p) => p.claim && p.claim.left > 0)) {
      this.timer ??= setTimeout(() => {
        this.timer = null;
        if (!this.writing && this.pending.length) void this.write();
      }, Math.ceil(wait));
      return;
    }
    void this.write();
  }

  private async write(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.writing = true;
    const batch = this.pending.splice(0, MAX_BATCH);
    try {
      await this.repo.recordAttempts(batch.map((b) => b.record));
      for (const b of batch) b.done();
    } catch (err) {
      for (const b of batch) b.done(err);
    } finally {
      this.writing = false;
      this.kick();
    }
  }
}
