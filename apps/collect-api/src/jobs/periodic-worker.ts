import { Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { PeriodicTask } from './periodic-task.js';

/**
 * A provider of the worker composition that runs one pass every `intervalMs` from start to
 * shutdown (a PeriodicTask owned by the Nest lifecycle): the subclass says what a pass does and
 * when the first one runs. `runOnce()` is a pass now (or the one already running).
 */
export abstract class PeriodicWorker<T> implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected readonly logger = new Logger(this.constructor.name);
  private readonly task: PeriodicTask<T>;

  protected constructor(private readonly intervalMs: number) {
    this.task = new PeriodicTask(() => this.pass(), intervalMs);
  }

  /** One pass: it logs its own failure and answers what it did. */
  protected abstract pass(): Promise<T>;

  /** How long after start the first pass runs (one interval unless said); null: never (switched off by configuration). */
  protected firstDelayMs(): number | null {
    return this.intervalMs;
  }

  onApplicationBootstrap(): void {
    const delay = this.firstDelayMs();
    if (delay !== null) this.task.start(delay);
  }

  runOnce(): Promise<T> {
    return this.task.runOnce();
  }

  beforeApplicationShutdown(): Promise<void> {
    return this.task.stop();
  }
}
