import { spawn } from 'node:child_process';
import { createConnection } from 'node:net';
import { freePort, waitFor } from './ports.js';
import { stopChild, trackChild } from './children.js';
import { ensureSystemPackages, REDIS_SERVER } from './system-packages.js';

export interface RedisHandle {
  port: number;
  url: string;
  stop(): Promise<void>;
}

/** A throw-away redis-server on loopback: no persistence, no service manager. Installs Debian's when root and missing. */
export async function startRedis(options: { port?: number; log?: (line: string) => void } = {}): Promise<RedisHandle> {
  ensureSystemPackages([REDIS_SERVER], { log: options.log });
  const port = options.port ?? (await freePort());
  const child = trackChild(
    spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], {
      stdio: 'ignore',
      detached: true, // as PostgreSQL's (postgres.ts): stopped after the services, not by the terminal's Ctrl-C
    }),
  );
  await waitFor(() => ping(port), 10_000, `redis-server on port ${port}`);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      await stopChild(child, 'SIGTERM', 3000);
    },
  };
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('error', () => resolve(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
  });
}
