/**
 * Errors that say the database could not do the work right now, not that the request was wrong
 * or the code is (docs/api-conventions.md, "Errors"): answered 503 with Retry-After, so a phone
 * or a script sends again, instead of a 500 that reads as a defect.
 *
 * By SQLSTATE (PostgreSQL, appendix A): class 08 (the connection failed), 40001 and 40P01 (the
 * transaction lost to another and wrote nothing), 53 (insufficient resources: too many
 * connections, out of memory, disk full), 55P03 (a lock not available), 57P01 to 57P03 (the
 * server is shutting down or starting). And node-postgres's own, which carry no SQLSTATE: its
 * pool gave no connection within its timeout, or the connection ended under a query.
 */
const TRANSIENT_STATES = new Set(['40001', '40P01', '55P03', '57P01', '57P02', '57P03']);
const TRANSIENT_CLASSES = new Set(['08', '53']);
const DRIVER_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated unexpectedly',
  'Connection terminated due to connection timeout',
  'Client has encountered a connection error and is not queryable',
];

/** The SQLSTATE of a driver error, also when TypeORM wraps it (QueryFailedError.driverError). */
export function sqlStateOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; driverError?: { code?: unknown } } | null | undefined;
  const code = e?.code ?? e?.driverError?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** The transaction lost to another one and wrote nothing: running it again is safe (deadlock, serialization failure). */
export function isLostTransaction(err: unknown): boolean {
  const state = sqlStateOf(err);
  return state === '40001' || state === '40P01';
}

/** True for the database conditions above. */
export function isTransientDatabaseError(err: unknown): boolean {
  const state = sqlStateOf(err);
  if (state) return TRANSIENT_STATES.has(state) || TRANSIENT_CLASSES.has(state.slice(0, 2));
  const message = err instanceof Error ? err.message : '';
  const driver = (err as { driverError?: unknown } | null)?.driverError;
  const driverMessage = driver instanceof Error ? driver.message : '';
  return DRIVER_MESSAGES.some((m) => message.includes(m) || driverMessage.includes(m));
}
