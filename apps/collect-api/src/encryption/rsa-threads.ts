import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { KeyObject } from 'node:crypto';

// Built code runs dist/encryption/rsa-unwrap.worker.js beside this file; under ts-jest the
// sources run from src/ and the worker runs the built file (pnpm test builds first).
const ENTRY = import.meta.url.endsWith('.ts')
  ? new URL('../../dist/encryption/rsa-unwrap.worker.js', import.meta.url)
  : new URL('./rsa-unwrap.worker.js', import.meta.url);

/** One thread per core, at most four (docs/encryption.md, "Server mode"). */
const THREADS = Math.max(1, Math.min(availableParallelism(), 4));
/** A thread without work for this long ends; the next operation starts one again. */
const IDLE_MS = 30_000;

interface RsaThread {
  worker: Worker;
  /** Operations given to it and not answered, by id. */
  waiting: Map<number, (plaintext: Buffer | null) => void>;
  idle: NodeJS.Timeout | null;
}

const threads: Array<RsaThread | null> = Array.from({ length: THREADS }, () => null);
let nextId = 0;

/**
 * Collect's RSA-OAEP reading of `wrapped` with `key`, in one of the process's RSA threads
 * (worker threads, started when first needed): the plaintext, or null when that reading does
 * not open it or the thread failed. Node's WebCrypto, which ran these on libuv's thread pool
 * before, held the event loop about 0.1 ms per operation while it queued it, a message to a
 * thread about 0.03 ms (docs/encryption.md, "Server mode"). The key goes with the message: the
 * thread shares it and keeps no reference once it has answered.
 */
export function unwrapInThread(key: KeyObject, wrapped: Buffer): Promise<Buffer | null> {
  const thread = pick();
  const id = nextId++;
  return new Promise((resolve) => {
    // Ref'd while it holds work: an operation waited on keeps the process alive until answered.
    if (thread.waiting.size === 0) thread.worker.ref();
    thread.waiting.set(id, resolve);
    if (thread.idle) {
      clearTimeout(thread.idle);
      thread.idle = null;
    }
    thread.worker.postMessage({ id, key, wrapped });
  });
}

/** The thread with the fewest operations waiting; a new one while a place is free and all are busy. */
function pick(): RsaThread {
  let best: RsaThread | null = null;
  for (const t of threads) if (t && (!best || t.waiting.size < best.waiting.size)) best = t;
  if (best && best.waiting.size === 0) return best;
  const free = threads.indexOf(null);
  return free >= 0 ? start(free) : best!;
}

function start(slot: number): RsaThread {
  // Without --cpu-prof: a thread inheriting it would write its profile over the process's (bench/, BENCH_CPU_PROF).
  const execArgv = process.execArgv.filter((a) => !a.startsWith('--cpu-prof'));
  const worker = new Worker(ENTRY, { execArgv, resourceLimits: { maxOldGenerationSizeMb: 16 } });
  // Without work the thread does not keep the process alive: stopping does not wait on it.
  worker.unref();
  const thread: RsaThread = { worker, waiting: new Map(), idle: null };
  threads[slot] = thread;
  worker.on('message', ({ id, plaintext }: { id: number; plaintext: Uint8Array | null }) => {
    const resolve = thread.waiting.get(id);
    thread.waiting.delete(id);
    resolve?.(plaintext ? Buffer.from(plaintext.buffer, plaintext.byteOffset, plaintext.byteLength) : null);
    if (thread.waiting.size === 0 && threads[slot] === thread) {
      thread.worker.unref();
      thread.idle = setTimeout(() => stop(slot, thread), IDLE_MS).unref();
    }
  });
  // A thread that fails or ends answers null to what it held (the caller then unwraps on the event loop) and its place frees.
  const fail = () => stop(slot, thread);
  worker.on('error', fail);
  worker.on('exit', fail);
  return thread;
}

function stop(slot: number, thread: RsaThread): void {
  if (threads[slot] === thread) threads[slot] = null;
  if (thread.idle) clearTimeout(thread.idle);
  thread.idle = null;
  for (const resolve of thread.waiting.values()) resolve(null);
  thread.waiting.clear();
  void thread.worker.terminate();
}

/** Ends every RSA thread; what they held answers null. The next operation starts one again. */
export function stopRsaThreads(): void {
  threads.forEach((t, slot) => t && stop(slot, t));
}
