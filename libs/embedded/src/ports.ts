import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports handed out by this process, so two calls never answer the same one (a port is chosen
 * now and listened on later, often seconds later, after a child process has started).
 */
const handedOut = new Set<number>();

/**
 * The kernel's ephemeral range: where it picks the local port of every outgoing connection (and
 * of `listen(0)`). A port chosen in it and listened on later can be taken meanwhile by any
 * connection on the machine: CI saw `listen EADDRINUSE` on a port chosen before a CAS child
 * process had started and opened its PostgreSQL connections (docs/operations.md "Checks in CI").
 */
function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low > 0 && high >= low) return [low, high];
  } catch {
    // Not Linux: the IANA dynamic range.
  }
  return [49152, 65535];
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A free TCP port on loopback, below the ephemeral range (so no outgoing connection takes it
 * before it is listened on), at random so that concurrent test processes seldom pick the same one.
 * Falls back to the kernel's choice when no such port is free.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const from = 10_000;
  const to = Math.min(low, 65_536) - 1;
  for (let attempt = 0; to > from && attempt < 50; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  const port = await kernelPort();
  handedOut.add(port);
  return port;
}

/** Thrown from a waitFor check to stop waiting at once (the awaited thing can no longer happen). */
export class GiveUp extends Error {}

/**
 * Calls `check` every 50 ms until it answers true. Gives up once `timeoutMs` have been spent by
 * `clock` (wall time by default; a child process's own CPU time for a service start,
 * startServiceProcess) or the clock's wall cap has passed.
 */
export async function waitFor(
  check: () => Promise<boolean>, timeoutMs: number, what: string,
  clock: { spentMs(): number; overWallCap(): boolean } = wallClock(),
): Promise<void> {
  let lastError: unknown;
  while (clock.spentMs() < timeoutMs && !clock.overWallCap()) {
    try {
      if (await check()) return;
    } catch (err) {
      if (err instanceof GiveUp) throw err;
      lastError = err;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
}

function wallClock(): { spentMs(): number; overWallCap(): boolean } {
  const started = Date.now();
  return { spentMs: () => Date.now() - started, overWallCap: () => false };
}
