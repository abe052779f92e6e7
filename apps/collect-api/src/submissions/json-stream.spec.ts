import http from 'node:http';
import { connect } from 'node:net';
import { sendJsonArray } from './json-stream.js';

/**
 * A client that left before its page began to be written (docs/security.md, "Streamed reads
 * and heavy queries"): its `close` was emitted before sendJsonArray listened for it.
 */
describe('sendJsonArray', () => {
  it('a response whose client already left: returns at once and gives the batches (the cursor) back', async () => {
    let returned = false;
    async function* batches(): AsyncGenerator<string[]> {
      try {
        // Each batch is larger than the socket's buffers: a write answers false.
        for (let i = 0; i < 8; i++) yield [`"${'x'.repeat(4 << 20)}"`];
      } finally {
        returned = true;
      }
    }
    let outcome: (v: string) => void = () => undefined;
    const result = new Promise<string>((r) => (outcome = r));
    const server = http.createServer((_req, res) => {
      res.once('close', () => {
        const sent = sendJsonArray(res, {}, batches()).then(() => 'returned');
        // Generous: the fixed code returns within a tick; the old one never did.
        void Promise.race([sent, new Promise<string>((r) => setTimeout(() => r('still waiting for a drain'), 20_000).unref())]).then(outcome);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as { port: number }).port;
      const socket = connect(port, '127.0.0.1', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      socket.on('error', () => undefined);
      // Gone once the request is in: the server sees its `close` before writing anything.
      server.once('request', () => socket.destroy());
      expect(await result).toBe('returned');
      expect(returned).toBe(true);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 60_000);
});
