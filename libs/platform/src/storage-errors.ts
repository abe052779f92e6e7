/**
 * File-system errors that are not the request's fault nor a defect (docs/api-conventions.md,
 * "Errors"), read from the error or the errors it wraps (`cause`):
 * - the storage has no room for what the request brings: the file system is full (ENOSPC) or its
 *   quota spent (EDQUOT). Answered 507 so a phone keeps the upload and sends it again later, and
 *   logged at error level, since only an operator can make room;
 * - the process or the system has no file handle left (EMFILE, ENFILE), under a load that passes:
 *   answered 503 with Retry-After, as a busy database is.
 */
const FULL = new Set(['ENOSPC', 'EDQUOT']);
const OUT_OF_HANDLES = new Set(['EMFILE', 'ENFILE']);

function hasCode(err: unknown, codes: ReadonlySet<string>): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | null | undefined, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && codes.has(e.code)) return true;
  }
  return false;
}

/** True when `err`, or the error it wraps, is a full file system or a spent quota. */
export function isStorageFull(err: unknown): boolean {
  return hasCode(err, FULL);
}

/** True when `err`, or the error it wraps, says no file handle was left to open a file or socket. */
export function isOutOfFileHandles(err: unknown): boolean {
  return hasCode(err, OUT_OF_HANDLES);
}
