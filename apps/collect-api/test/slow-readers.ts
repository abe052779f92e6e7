import { connect, type Socket } from 'node:net';
import pg from 'pg';

/** A client that asks for a response, takes its first chunk, then stops reading (its socket stays open). */
export interface SlowReader {
  /** The status of the response (its first line); 0 when none came within 30 s. */
  status: Promise<number>;
  /** Settles when the connection closed (a paused socket sees the server's close only once resumed). */
  closed: Promise<void>;
  socket: Socket;
}

/**
 * Sends `GET path` over a raw socket and stops reading after the first chunk: the kernel's
 * buffers fill and the server's writes wait for a drain that never comes (unless the server
 * gives up). A response that is not 200 is read to its end and the socket closed.
 */
export function slowReader(baseUrl: string, path: string, authorization: string): SlowReader {
  const url = new URL(baseUrl);
  const socket = connect({ host: url.hostname, port: Number(url.port) });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  const status = new Promise<number>((resolve, reject) => {
    socket.once('connect', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${authorization}\r\n\r\n`));
    socket.once('data', (chunk: Buffer) => {
      const code = Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1'))?.[1] ?? 0);
      if (code === 200) socket.pause();
      else socket.end();
      resolve(code);
    });
    socket.once('close', () => reject(new Error(`closed before any answer: ${path}`)));
    // No answer at all (a server whose connections are all held): 0, for the caller's assertion.
    setTimeout(() => resolve(0), 30_000).unref();
  });
  status.catch(() => undefined);
  return { status, closed, socket };
}

/** A connection of the test's own to the app's database (never the app's pools, which a fault could exhaust). */
export async function watcher(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return client;
}

/** Connections of the app's database now idle in a transaction or running a statement, other than `db`'s own. */
export async function busyConnections(db: pg.Client): Promise<{ total: number; reads: number }> {
  const { rows } = await db.query<{ total: number; reads: number }>(
    `SELECT count(*)::int AS total, count(*) FILTER (WHERE application_name = 'collect-api reads')::int AS reads FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state IN ('active', 'idle in transaction', 'idle in transaction (aborted)')`,
  );
  return rows[0]!;
}

/** Polls `check` until it holds, at most `ms` (then the last value is returned for the assertion). */
export async function eventually<T>(read: () => Promise<T>, check: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  let v = await read();
  while (!check(v) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    v = await read();
  }
  return v;
}
