import { Injectable } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { HttpErrorWithHeaders, TooManyRequestsError } from '@collect/contracts';
import { CollectConfig } from '../config/collect-config.js';
import { ReaderGoneError, ReadLease, ReadPool } from './read-pool.js';

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

interface Waiter {
  key: string;
  /** Takes the slot at once, for the waiter's response. */
  grant: () => void;
  refuse: (err: Error) => void;
}

/**
 * The slots of streamed and heavy reads (docs/security.md, "Streamed reads and heavy queries"):
 * at most READ_POOL_SIZE at once in this process (one connection of the ReadPool each, so a slot
 * never waits for a connection), at most READS_PER_USER of them for one caller. A read that finds
 * no slot waits for one, first come first served, for at most READ_SLOT_WAIT_MS (so a client that
 * pages a few requests in parallel is served in turn, not refused), then gets 429 (its own limit)
 * or 503 (every slot taken); at most READ_SLOT_QUEUE reads wait at once, and one caller at most a
 * quarter of them, past which the answer comes at once. A response that stops draining
 * for STREAM_STALL_TIMEOUT_MS has its socket destroyed, which ends the read and gives its slot and
 * connection back, so no wait is longer than that. A slot lasts until its response closes.
 */
@Injectable()
export class ReadSlots {
  private readonly perUser = new Map<string, number>();
  private readonly waitingPerUser = new Map<string, number>();
  private readonly queue: Waiter[] = [];
  private taken = 0;

  constructor(
    private readonly reads: ReadPool,
    private readonly config: CollectConfig,
  ) {}

  /** Slots held now (all callers); for the metrics and the tests. */
  get inUse(): number {
    return this.taken;
  }

  /** Reads waiting for a slot now; for the metrics and the tests. */
  get waiting(): number {
    return this.queue.length;
  }

  /**
   * A slot for `caller` (a user id, or the client's address for an anonymous read) for as long
   * as `res` is open, or a 429/503 before anything is read.
   */
  open(caller: string | number, res: ServerResponse): Promise<ReadLease> {
    const key = String(caller);
    // A client that left before its read got here (while it was authenticated, or its form
    // looked up) emitted `close` already: a slot taken now would wait for that event forever,
    // and so would the read's connection.
    if (res.destroyed || res.closed) return Promise.reject(new ReaderGoneError());
    return this.free(key) ? Promise.resolve(this.take(key, res)) : this.wait(key, res);
  }

  /** A lease outside the slots, for background work with no client (the worker's exports). */
  background(): ReadLease {
    return new ReadLease(this.reads);
  }

  private free(key: string): boolean {
    return (this.perUser.get(key) ?? 0) < this.config.READS_PER_USER && this.taken < this.config.READ_POOL_SIZE;
  }

  private refusal(key: string): Error {
    const mine = this.perUser.get(key) ?? 0;
    if (mine >= this.config.READS_PER_USER) {
      return new TooManyRequestsError(`You have ${mine} streamed or filtered reads running, the most one user may (READS_PER_USER); wait for one to finish.`, 5);
    }
    return new HttpErrorWithHeaders(503, 'Every slot for streamed and filtered reads is taken (READ_POOL_SIZE); try again shortly.', { 'Retry-After': '2' });
  }

  private wait(key: string, res: ServerResponse): Promise<ReadLease> {
    const waiting = this.waitingPerUser.get(key) ?? 0;
    const ms = this.config.READ_SLOT_WAIT_MS;
    if (ms === 0 || this.queue.length >= this.config.READ_SLOT_QUEUE || waiting >= Math.ceil(this.config.READ_SLOT_QUEUE / 4)) {
      return Promise.reject(this.refusal(key));
    }
    this.waitingPerUser.set(key, waiting + 1);
    return new Promise<ReadLease>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        res.off('close', gone);
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        const left = (this.waitingPerUser.get(key) ?? 1) - 1;
        if (left > 0) this.waitingPerUser.set(key, left);
        else this.waitingPerUser.delete(key);
      };
      const waiter: Waiter = {
        key,
        grant: () => {
          leave();
          resolve(this.take(key, res));
        },
        refuse: (err) => {
          leave();
          reject(err);
        },
      };
      const timer = setTimeout(() => waiter.refuse(this.refusal(key)), ms);
      // A client that leaves while waiting gives its place up; nothing is read for it.
      const gone = () => waiter.refuse(this.refusal(key));
      res.once('close', gone);
      this.queue.push(waiter);
    });
  }

  private take(key: string, res: ServerResponse): ReadLease {
    this.perUser.set(key, (this.perUser.get(key) ?? 0) + 1);
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
      this.next();
    });
    return lease;
  }

  /** Grants freed slots to the first waiters that may take one (their own limit allowing). */
  private next(): void {
    for (const waiter of [...this.queue]) {
      if (this.taken >= this.config.READ_POOL_SIZE) return;
      if (this.free(waiter.key)) waiter.grant();
    }
  }
}
