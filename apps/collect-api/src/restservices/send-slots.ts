/**
 * The delivery worker's bound on rows in flight (FORWARD_CONCURRENCY across every job of the
 * process): a counting semaphore whose `take(n)` waits for at least one free slot and takes up
 * to `n`. A job claims only as many of its rows as it got slots for, so a claimed row is sent
 * at once and its lease does not run while it waits (the rest of the job stays `queued`).
 */
export class SendSlots {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(size: number) {
    this.free = size;
  }

  async take(wanted: number): Promise<number> {
    while (this.free === 0) await new Promise<void>((resolve) => this.waiting.push(resolve));
    const n = Math.min(wanted, this.free);
    this.free -= n;
    return n;
  }

  give(n = 1): void {
    this.free += n;
    for (let i = Math.min(this.free, this.waiting.length); i > 0; i--) this.waiting.shift()!();
  }
}
