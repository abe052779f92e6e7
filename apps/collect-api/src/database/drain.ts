import { once, type EventEmitter } from 'node:events';

/**
 * Waits for `drain` on `stream`, or for `close` on it or on any of `closers`, then removes every
 * listener the wait added. A bare `Promise.race` of `events.once` calls leaves the losers'
 * listeners behind: one `close` and one `error` listener per wait, so a long stream to a slow
 * client gathered thousands of them (docs/security.md, "Streamed reads and heavy queries").
 */
export async function drainOrClose(stream: EventEmitter, ...closers: EventEmitter[]): Promise<void> {
  const stop = new AbortController();
  const { signal } = stop;
  try {
    await Promise.race([once(stream, 'drain', { signal }), once(stream, 'close', { signal }), ...closers.map((c) => once(c, 'close', { signal }))]);
  } finally {
    stop.abort();
  }
}
