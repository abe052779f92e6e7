import type { Writable } from 'node:stream';

/**
 * At most `size` zip entries reading their bytes at once, so an archive holds a few open files
 * whatever it contains (docs/exports.md, "Streaming and memory"). The media archive and the
 * decrypted archive both queue their entries through one.
 */
export class EntryWindow {
  private inFlight = 0;
  private wake: (() => void) | null = null;

  constructor(private readonly size: number) {}

  /** Waits for a free place; ends early when `out` is gone or one of `stops` settles (a failure, the client's close). */
  async take(out: Writable, ...stops: Array<Promise<unknown>>): Promise<void> {
    while (this.inFlight >= this.size && !out.destroyed) await Promise.race([new Promise<void>((r) => (this.wake = r)), ...stops]);
    this.inFlight++;
  }

  /** An entry's bytes are read (or failed): its place is free. */
  readonly settle = (): void => {
    this.inFlight--;
    this.wake?.();
  };
}
