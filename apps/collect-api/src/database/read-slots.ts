import { Inject, Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { HttpErrorWithHeaders, TooManyRequestsError } from '@collect/contracts';
import { COLLECT_CONFIG, type CollectConfig } from '../config/collect-config.js';
import { ReadLease, ReadPool } from './read-pool.js';

/**
 * Destroys the socket of `res` when output waits for the client and none of it reached the
 * client for `ms` (a client that stopped reading). Returns a function that stops watching.
 * Progress is what left the process: bytes given to the socket minus what it still buffers.
 */
export function watchStall(res: ServerResponse, ms: number): () => void {
  let sent = -1;
  let since = Date.now();
  const timer = setInterval(() => {
    const socket = res.socket;
    if (!socket || socket.destroyed) return;
    const waiting = res.writableLength > 0 || socket.writableLength > 0;
    const now = socket.bytesWritten - socket.writableLength;
    if (!waiting || now !== sent) {
      sent = now;
      since = Date.now();
      return;
    }
    if (Date.now() - since >= ms) {
      clearInterval(timer);
      socket.destroy();
    }
  }, Math.max(25, Math.min(1_000, Math.floor(ms / 4))));
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * The slots of streamed and heavy reads (docs/security.md, "Streamed reads and heavy queries"):
 * at most READ_POOL_SIZE at once in this process (one connection of the ReadPool each, so a slot
 * never waits for a connection), at most READS_PER_USER of them for one caller (429 past it); a
 * response that stops draining for STREAM_STALL_TIMEOUT_MS has its socket destroyed, which ends
 * the read and gives its slot and connection back. A slot lasts until its response closes.
 */
@Injectable()
export class ReadSlots {
  private readonly perUser = new Map<string, number>();
  private taken = 0;

  constructor(
    private readonly reads: ReadPool,
    @Inject(COLLECT_CONFIG) private readonly config: CollectConfig,
  ) {}

  /** Slots held now (all callers); for the metrics and the tests. */
  get inUse(): number {
    return this.taken;
  }

  /**
   * A slot for `caller` (a user id, or the client's address for an anonymous read) for as long
   * as `res` is open, or a 429/503 before anything is read.
   */
  open(caller: string | number, res: ServerResponse): ReadLease {
    const key = String(caller);
    const mine = this.perUser.get(key) ?? 0;
    if (mine >= this.config.READS_PER_USER) {
      throw new TooManyRequestsError(`You have ${mine} streamed or filtered reads running, the most one user may (READS_PER_USER); wait for one to finish.`, 5);
    }
    if (this.taken >= this.config.READ_POOL_SIZE) {
      throw new HttpErrorWithHeaders(503, 'Every slot for streamed and filtered reads is taken (READ_POOL_SIZE); try again shortly.', { 'Retry-After': '2' });
    }
    this.perUser.set(key, mine + 1);
    this.taken++;
    const lease = new ReadLease(this.reads);
    const unwatch = watchStall(res, this.config.STREAM_STALL_TIMEOUT_MS);
    res.once('close', () => {
      unwatch();
      if (!res.writableFinished) lease.abort();
      this.taken--;
      const left = (this.perUser.get(key) ?? 1) - 1;
      if (left > 0) this.perUser.set(key, left);
      else this.perUser.delete(key);
    });
    return lease;
  }

  /** A lease outside the slots, for background work with no client (the worker's exports). */
  background(): ReadLease {
    return new ReadLease(this.reads);
  }
}
