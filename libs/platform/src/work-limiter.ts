/** Thrown by WorkLimiter when every slot is busy and the queue is full. */
export class WorkLimiterFullError extends Error {
  constructor(readonly limiter: string) {
    super(`${limiter}: every slot is busy and the queue is full`);
    this.name = 'WorkLimiterFullError';
  }
}

/**
 * At most `concurrency` tasks at once, at most `maxQueue` waiting; beyond that a task is refused
 * at once (WorkLimiterFullError) instead of waiting without bound. Bounds the expensive work an
 * anonymous client can start in one process: a password hash costs ~50 ms of a core and 19 MiB
 * (docs/security.md "Bounded work").
 */
export class WorkLimiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly name: string,
    private readonly concurrency: number,
    private readonly maxQueue: number,
  ) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) {
      if (this.waiting.length >= this.maxQueue) throw new WorkLimiterFullError(this.name);
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.active++;
    }
    try {
      return await task();
    } finally {
      // The slot passes straight to the next waiter (active stays the same), or is freed.
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  /** Tasks running and waiting (observability, tests). */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }
}
