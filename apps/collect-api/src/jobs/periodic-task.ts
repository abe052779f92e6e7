/**
 * A background pass run every `intervalMs` (the first after `firstDelayMs`), never two at once
 * in one process, stopped by `stop()` (which waits for a pass in progress). Errors are the
 * pass's own business: it logs and returns.
 */
export class PeriodicTask<T> {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private running: Promise<T> | null = null;

  constructor(
    private readonly pass: () => Promise<T>,
    private readonly intervalMs: number,
  ) {}

  start(firstDelayMs = this.intervalMs): void {
    const schedule = (delay: number) => {
      if (this.stopped) return;
      this.timer = setTimeout(() => void this.runOnce().finally(() => schedule(this.intervalMs)), delay);
      this.timer.unref();
    };
    schedule(firstDelayMs);
  }

  /** One pass now, or the one already running. */
  runOnce(): Promise<T> {
    this.running ??= this.pass().finally(() => (this.running = null));
    return this.running;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
