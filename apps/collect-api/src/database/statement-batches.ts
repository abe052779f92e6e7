import { isLostTransaction } from '@collect/platform';

/**
 * Group commit for a statement of a hot path: calls that arrive while earlier batches are on
 * their way wait and then run together as ONE statement (one round trip, one PostgreSQL
 * transaction, one executor start) instead of one each. Nothing waits on a timer: a call runs at
 * once when fewer than `maxInFlight` batches are running, so a lone request pays no added
 * latency, and under load the batch grows by itself with the time the statement takes
 * (docs/architecture.md, "The walk of a submission").
 *
 * `spareAfterMs`: a statement beyond the first starts only once every statement on its way has
 * run that long (a stall: a lock wait, a slow disk), so under a steady load the calls that wait
 * go together behind the one statement instead of a second lane taking them one by one (each
 * row of a one-row statement cost PostgreSQL about twice what a row of a batch did;
 * docs/forms.md, "Intake: caches and one statement"). A stalled statement still does not
 * hold up the rest: one timer per stall lets the waiting calls go.
 *
 * `gatherTurn`: a statement that would start with nothing on its way starts at the end of the
 * event-loop turn (setImmediate) instead of at once, with every call the turn produced: under
 * load one turn reads several requests, and their first statement took one of them alone
 * (docs/forms.md, "Intake: caches and one statement"). Idle, the
 * turn ends at once, so a lone request waits for no timer.
 *
 * Each call keeps its own answer: `run` returns one result per item, in order. Two items with
 * the same `key` never share a batch (the later one runs in a following batch, so it sees the
 * earlier one's row as any second request would). When a batch of several fails, every item is
 * run again alone, so one item's error (a bad value) is answered to that item only: a failed
 * statement wrote nothing, so running them again changes nothing twice. An item that loses a
 * deadlock or a serialization conflict alone runs once more before its error is answered.
 */
export class StatementBatches<I, O> {
  private readonly waiting: Array<{ item: I; resolve: (o: O) => void; reject: (e: unknown) => void }> = [];
  private inFlight = 0;
  /** When the latest statement on its way started (performance.now()), for `spareAfterMs`. */
  private lastStart = 0;
  private spareTimer: NodeJS.Timeout | null = null;
  private turnEnd: NodeJS.Immediate | null = null;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly key: (item: I) => string,
    private readonly options: { maxInFlight: number; maxItems: number; spareAfterMs?: number; gatherTurn?: boolean },
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    if (this.options.gatherTurn && this.inFlight === 0 && this.waiting.length) {
      this.turnEnd ??= setImmediate(() => {
        this.turnEnd = null;
        this.start();
      });
      return;
    }
    this.start();
  }

  private start(): void {
    while (this.inFlight < this.options.maxInFlight && this.waiting.length) {
      if (this.inFlight > 0 && this.options.spareAfterMs !== undefined) {
        const wait = this.lastStart + this.options.spareAfterMs - performance.now();
        if (wait > 0) {
          // Behind the statement on its way, unless it stalls: then these go without it.
          this.spareTimer ??= setTimeout(() => {
            this.spareTimer = null;
            this.start();
          }, Math.ceil(wait)).unref();
          return;
        }
      }
      const batch: typeof this.waiting = [];
      const keys = new Set<string>();
      const later: typeof this.waiting = [];
      for (const w of this.waiting) {
        const k = this.key(w.item);
        if (batch.length >= this.options.maxItems || keys.has(k)) later.push(w);
        else {
          keys.add(k);
          batch.push(w);
        }
      }
      this.waiting.splice(0, this.waiting.length, ...later);
      this.inFlight++;
      this.lastStart = performance.now();
      void this.runBatch(batch).finally(() => {
        this.inFlight--;
        this.next();
      });
    }
  }

  private async runBatch(batch: Array<{ item: I; resolve: (o: O) => void; reject: (e: unknown) => void }>): Promise<void> {
    try {
      const results = await this.run(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (err) {
      await Promise.all(
        batch.map(async (w) => {
          try {
            w.resolve((await this.runAlone(w.item, batch.length === 1 ? err : null))[0]!);
          } catch (e) {
            w.reject(e);
          }
        }),
      );
    }
  }

  /**
   * One item by itself, once more after it lost a deadlock or a serialization conflict (the
   * statement wrote nothing, so nothing is written twice): such a loss says nothing about the
   * item, and it would otherwise reach its caller as an error (docs/api-conventions.md, "Errors").
   * `failed`: the error the item already got alone (null: it has not run alone yet).
   */
  private async runAlone(item: I, failed: unknown): Promise<O[]> {
    if (failed === null) {
      try {
        return await this.run([item]);
      } catch (err) {
        failed = err;
      }
    }
    if (!isLostTransaction(failed)) throw failed;
    return this.run([item]);
  }
}
