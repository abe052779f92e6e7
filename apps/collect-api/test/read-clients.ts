import http from 'node:http';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { ReadPool } from '../src/database/read-pool.js';
import { ReadSlots } from '../src/database/read-slots.js';
import { busyConnections } from './slow-readers.js';
import type { TestCollectApp } from './test-app.js';

/**
 * How a client treats its response: `read` takes all of it, `stop` takes the status and then
 * nothing more (its socket stays open), `leave` closes its connection `afterMs` after sending
 * (before or while the answer comes), `leave-streaming` closes it on the first chunk of a 200.
 */
export type ReadMode = { kind: 'read' } | { kind: 'stop' } | { kind: 'leave'; afterMs: number } | { kind: 'leave-streaming' };

export interface ReadOutcome {
  /** The response's status; 0 when none came before the client left or gave up. */
  status: number;
  /** The whole response arrived (its end, not a cut connection). */
  complete: boolean;
  bytes: number;
}

export interface ReadClient {
  outcome: Promise<ReadOutcome>;
  /** Closes the client's connection (a `stop` client keeps it open until then). */
  close(): void;
}

/**
 * One GET over a connection of its own. A response that is not 200 is always read to its end.
 * `giveUpMs`: a client still without an answer then records status 0 (a hang, for the caller's
 * assertion) and closes.
 */
export function readClient(baseUrl: string, path: string, authorization: string, mode: ReadMode, giveUpMs = 60_000): ReadClient {
  const url = new URL(path, baseUrl);
  const req = http.request(url, { agent: false, headers: { Authorization: authorization } });
  let status = 0;
  let bytes = 0;
  let settle: (o: ReadOutcome) => void = () => undefined;
  const outcome = new Promise<ReadOutcome>((resolve) => {
    settle = (o) => {
      clearTimeout(giveUp);
      resolve(o);
    };
  });
  const giveUp = setTimeout(() => {
    settle({ status, complete: false, bytes });
    req.destroy();
  }, giveUpMs);
  req.on('error', () => settle({ status, complete: false, bytes }));
  req.on('response', (res) => {
    status = res.statusCode ?? 0;
    res.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (status === 200 && mode.kind === 'leave-streaming') {
        req.destroy();
        settle({ status, complete: false, bytes });
      }
    });
    res.on('end', () => settle({ status, complete: true, bytes }));
    res.on('close', () => settle({ status, complete: res.complete, bytes }));
    if (status === 200 && mode.kind === 'stop') {
      res.pause();
      settle({ status, complete: false, bytes });
    }
  });
  if (mode.kind === 'leave') {
    setTimeout(() => {
      req.destroy();
      settle({ status, complete: false, bytes });
    }, mode.afterMs);
  }
  req.end();
  return { outcome, close: () => req.destroy() };
}

/** Connections a pg pool has lent out and callers waiting for one. */
function lent(pool: pg.Pool): { lent: number; waiting: number } {
  return { lent: pool.totalCount - pool.idleCount, waiting: pool.waitingCount };
}

export interface ReadState {
  /** Read slots held and reads waiting for one (database/read-slots.ts). */
  slots: { held: number; waiting: number };
  /** The read pool's and the main pool's connections lent out, and callers waiting for one. */
  readPool: { lent: number; waiting: number };
  mainPool: { lent: number; waiting: number };
  /** Sessions of the app's database running a statement or inside a transaction (pg_stat_activity). */
  busy: { total: number; reads: number };
}

/** What the app holds now, from its own counters and from PostgreSQL (`watcher` is the test's own connection). */
export async function readState(sut: TestCollectApp, watcher: pg.Client): Promise<ReadState> {
  const slots = sut.app.get(ReadSlots);
  const main = (sut.app.get(DataSource).driver as unknown as { master: pg.Pool }).master;
  return {
    slots: { held: slots.inUse, waiting: slots.waiting },
    readPool: lent(sut.app.get(ReadPool).pool),
    mainPool: lent(main),
    busy: await busyConnections(watcher),
  };
}

/** Nothing held: every slot, pooled connection and database session is back. */
export const IDLE: ReadState = { slots: { held: 0, waiting: 0 }, readPool: { lent: 0, waiting: 0 }, mainPool: { lent: 0, waiting: 0 }, busy: { total: 0, reads: 0 } };
