import type { ServerResponse } from 'node:http';
import { drainOrClose } from '../database/drain.js';

export type JsonResponse = Pick<ServerResponse, 'setHeader' | 'write' | 'end' | 'destroy' | 'destroyed' | 'statusCode' | 'writableEnded' | 'on' | 'once' | 'removeListener' | 'emit'>;

const JSON_TYPE = 'application/json; charset=utf-8';

/** One JSON document given as text. */
export function sendJsonText(res: JsonResponse, text: string): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', JSON_TYPE);
  res.end(text);
}

/** A whole JSON body, with its headers, in one write (Content-Length, no chunked encoding). */
export function sendJsonBody(res: JsonResponse, headers: Record<string, string>, body: Buffer): void {
  res.statusCode = 200;
  res.setHeader('Content-Type', JSON_TYPE);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.setHeader('Content-Length', body.length);
  res.end(body);
}

/** 304 Not Modified with `headers` (the client's copy, named by its ETag, is current). */
export function sendNotModified(res: JsonResponse, headers: Record<string, string>): void {
  res.statusCode = 304;
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end();
}

/**
 * A JSON array from batches of its items' texts, written as they come (a large page is never
 * held whole: docs/data-api.md). A write that the socket cannot take yet waits for `drain`;
 * a failure after the headers went out cuts the connection (the client sees a truncated body,
 * never a well-formed partial array). Stops reading when the client goes away, also when it left
 * before this began (its `close` was emitted then): waiting for a `drain` that never comes would
 * hold the cursor's connection for good (docs/security.md, "Streamed reads and heavy queries").
 */
export async function sendJsonArray(res: JsonResponse, headers: Record<string, string>, batches: AsyncIterable<string[]>): Promise<void> {
  res.statusCode = 200;
  res.setHeader('Content-Type', JSON_TYPE);
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  let closed = res.destroyed;
  const onClose = () => (closed = true);
  res.on('close', onClose);
  let first = true;
  try {
    res.write('[');
    for await (const batch of batches) {
      if (closed) break;
      if (!batch.length) continue;
      const ok = res.write(`${first ? '' : ','}${batch.join(',')}`);
      first = false;
      if (!ok && !closed) await drainOrClose(res as never);
    }
    if (!closed) res.end(']');
  } catch (err) {
    res.destroy(err as Error);
  } finally {
    res.removeListener('close', onClose);
  }
}
