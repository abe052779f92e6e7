import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A stand-in relying party: records every URL it is sent to and answers a tiny page. */
export class CallbackServer {
  readonly hits: URL[] = [];
  private server?: Server;
  base = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      this.hits.push(new URL(req.url ?? '/', this.base));
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>callback</title><p>callback received</p>');
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
