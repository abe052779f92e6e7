/**
 * The delivery worker's bound on rows in flight (FORWARD_CONCURRENCY across every job of the
 * process): a counting semaphore whose `take(n)` waits for at least one free slot and takes up
 * to `n`. The relay claims only as many due rows as it got slots for, so a claimed row is sent
 * at once and its lease does not run while it waits (the rest stay `pending` in the outbox).
 */
export class SendSlots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Up to `wanted` slots, once at least `atLeast` (at most the size) are free. */
  async take(wanted: number, atLeast = 1): Promise<number> {
    const enough = Math.max(1, Math.min(atLeast, wanted, this.size));
    while (this.free < enough) await new Promise<void>((resolve) => this.waiting.push(resolve));
    const n = Math.min(wanted, this.free);
    this.free -= n;
    return n;
  }

  give(n = 1): void {
    this.free += n;
    for (let i = Math.min(this.free, this.waiting.length); i > 0; i--) this.waiting.shift()!();
  }
}
