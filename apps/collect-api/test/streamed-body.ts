import { request as httpRequest } from 'node:http';

export interface StreamedAnswer {
  status: number;
  body: string;
  /** Bytes handed to the socket before the server answered. */
  sentBytes: number;
  connection: string | undefined;
}

/**
 * POSTs `parts` one after another, as fast as the server reads them, and resolves when the server
 * answers (or the body is all sent): how much was sent by then shows whether the server refused
 * before reading the body (docs/security.md, "Parsers of user input").
 */
export function sendPartByPart(url: string, path: string, headers: Record<string, string>, parts: Buffer[]): Promise<StreamedAnswer> {
  const { hostname, port } = new URL(url);
  const totalBytes = parts.reduce((n, p) => n + p.length, 0);
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    let answered = false;
    const req = httpRequest({ host: hostname, port, method: 'POST', path, headers: { ...headers, 'Content-Length': String(totalBytes) } });
    req.on('response', (res) => {
      answered = true;
      let body = '';
      res.on('data', (c) => (body += c));
      const done = () => resolve({ status: res.statusCode!, body, sentBytes, connection: res.headers.connection });
      res.on('end', done);
      res.on('error', done);
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const pump = async () => {
      for (const part of parts) {
        if (answered) return;
        sentBytes += part.length;
        if (!req.write(part)) await new Promise((r) => req.once('drain', r));
      }
      if (!answered) req.end();
    };
    void pump().catch(() => undefined);
  });
}
