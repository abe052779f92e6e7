import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { KeyObject } from 'node:crypto';

// Built code runs dist/encryption/crypto.worker.js beside this file; under ts-jest the sources
// run from src/ and the worker runs the built file (pnpm test builds first).
const ENTRY = import.meta.url.endsWith('.ts')
  ? new URL('../../dist/encryption/crypto.worker.js', import.meta.url)
  : new URL('./crypto.worker.js', import.meta.url);

/** One thread per core, at most four (docs/encryption.md, "Server mode"). */
const THREADS = Math.max(1, Math.min(availableParallelism(), 4));
/** A thread without work for this long ends; the next request starts one again. */
const IDLE_MS = 30_000;

/** What a crypto thread does (crypto.worker.ts). */
export type CryptoRequest =
  | { kind: 'unwrap'; key: KeyObject; wrapped: Uint8Array[]; part: KeyedPart | null }
  | { kind: 'part'; file: string; maxBytes: number; aesKey: Uint8Array; iv: Uint8Array; name: string };

/**
 * A local part to decrypt whole with the first value an unwrap request opens as its AES key,
 * and Collect's IV for its place among the envelope's parts (part-cipher.ts, partIv).
 */
export interface KeyedPart {
  file: string;
  maxBytes: number;
  instanceId: string;
  index: number;
  name: string;
}

/** A part decrypted whole in a thread: its plaintext and the plaintext's MD5. */
export interface DecryptedFile {
  plaintext: Buffer;
  md5Hex: string;
}

interface CryptoThread {
  worker: Worker;
  /** Requests given to it and not answered, by id. */
  waiting: Map<number, (answer: unknown) => void>;
  idle: NodeJS.Timeout | null;
}

const threads: Array<CryptoThread | null> = Array.from({ length: THREADS }, () => null);
let nextId = 0;

/**
 * Collect's RSA-OAEP reading of each of `wrapped` with `key`, in one message to one of the
 * process's crypto threads (worker threads, started when first needed): `plaintexts` follows
 * `wrapped`, a null where that reading opened nothing. With `part`, that part is read and
 * decrypted whole there with the first plaintext as its AES key (an envelope's key, signature
 * and XML part: one trip where there were three); `part` is null where the first did not open to
 * an AES key or the part gave nothing back (decryptFileInThread). Null when the thread failed.
 * WebCrypto, which runs RSA operations on libuv's thread pool, holds the event loop about 0.1 ms
 * per operation while it queues it, a message to a thread about 0.03 to 0.04 ms
 * (docs/encryption.md, "Server mode"). The key goes with the message: the thread shares it and
 * keeps no reference once it has answered.
 */
export async function unwrapInThread(key: KeyObject, wrapped: Buffer[], part: KeyedPart | null = null): Promise<{ plaintexts: Array<Buffer | null>; part: DecryptedFile | null } | null> {
  const answer = (await ask({ kind: 'unwrap', key, wrapped: wrapped.map(exact), part })) as { plaintexts: Array<Uint8Array | null>; part: FileAnswer | null } | null;
  if (!answer) return null;
  return { plaintexts: answer.plaintexts.map((p) => (p ? asBuffer(p) : null)), part: asFile(answer.part) };
}

/**
 * A part of at most `maxBytes` read from the local file `file` and decrypted whole (AES-256-CFB,
 * padding checked) in a crypto thread, with its plaintext MD5: the event loop neither reads nor
 * deciphers it (docs/encryption.md, "Decrypting without a server-held key"). Null when the file
 * is missing, larger, or does not decrypt, or the thread failed: the caller streams it then.
 */
export async function decryptFileInThread(r: { file: string; maxBytes: number; aesKey: Buffer; iv: Buffer; name: string }): Promise<DecryptedFile | null> {
  return asFile((await ask({ kind: 'part', ...r, aesKey: exact(r.aesKey), iv: exact(r.iv) })) as FileAnswer | null);
}

/**
 * The bytes in a buffer of their own: a message copies a view's whole ArrayBuffer, and a small
 * Buffer is usually a view into Node's 64 KB pool, which holds other requests' bytes too.
 */
export function exact(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A decrypted part as a thread's message carries it (its plaintext arrives as a Uint8Array). */
type FileAnswer = { plaintext: Uint8Array; md5Hex: string };

function asFile(answer: FileAnswer | null): DecryptedFile | null {
  return answer ? { plaintext: asBuffer(answer.plaintext), md5Hex: answer.md5Hex } : null;
}

/** The thread's answer, or null when the thread ended first or could not start. */
function ask(request: CryptoRequest): Promise<unknown> {
  let thread: CryptoThread;
  try {
    thread = pick();
  } catch {
    return Promise.resolve(null);
  }
  const id = nextId++;
  return new Promise((resolve) => {
    // Ref'd while it holds work: a request waited on keeps the process alive until answered.
    if (thread.waiting.size === 0) thread.worker.ref();
    thread.waiting.set(id, resolve);
    if (thread.idle) {
      clearTimeout(thread.idle);
      thread.idle = null;
    }
    try {
      thread.worker.postMessage({ ...request, id });
    } catch {
      // Not sendable (postMessage refused it): nothing waits on the thread for it.
      thread.waiting.delete(id);
      if (thread.waiting.size === 0) thread.worker.unref();
      resolve(null);
    }
  });
}

/** The thread with the fewest requests waiting; a new one while a place is free and all are busy. */
function pick(): CryptoThread {
  let best: CryptoThread | null = null;
  for (const t of threads) if (t && (!best || t.waiting.size < best.waiting.size)) best = t;
  if (best && best.waiting.size === 0) return best;
  const free = threads.indexOf(null);
  return free >= 0 ? start(free) : best!;
}

function start(slot: number): CryptoThread {
  // None of the process's options: the thread needs none, and one it inherited (--cpu-prof,
  // bench/'s BENCH_CPU_PROF) would write its profile over the process's.
  const worker = new Worker(ENTRY, { execArgv: [], resourceLimits: { maxOldGenerationSizeMb: 16 } });
  // Without work the thread does not keep the process alive: stopping does not wait on it.
  worker.unref();
  const thread: CryptoThread = { worker, waiting: new Map(), idle: null };
  threads[slot] = thread;
  worker.on('message', ({ id, answer }: { id: number; answer: unknown }) => {
    const resolve = thread.waiting.get(id);
    thread.waiting.delete(id);
    resolve?.(answer);
    if (thread.waiting.size === 0 && threads[slot] === thread) {
      thread.worker.unref();
      thread.idle = setTimeout(() => stop(slot, thread), IDLE_MS).unref();
    }
  });
  // A thread that fails or ends answers null to what it held (the caller then does it on the event loop) and its place frees.
  const fail = () => stop(slot, thread);
  worker.on('error', fail);
  worker.on('exit', fail);
  return thread;
}

function stop(slot: number, thread: CryptoThread): void {
  if (threads[slot] === thread) threads[slot] = null;
  if (thread.idle) clearTimeout(thread.idle);
  thread.idle = null;
  for (const resolve of thread.waiting.values()) resolve(null);
  thread.waiting.clear();
  void thread.worker.terminate();
}

/** Ends every crypto thread; what they held answers null. The next request starts one again. */
export function stopCryptoThreads(): void {
  threads.forEach((t, slot) => t && stop(slot, t));
}
