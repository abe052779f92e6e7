/**
 * Errors that say the server's storage has no room for what a request brings (docs/api-conventions.md,
 * "Errors"): the file system is full (ENOSPC) or its quota is spent (EDQUOT). Not the request's
 * fault, nor a defect: answered 507 so a phone keeps the upload and sends it again later, and
 * logged at error level, since only an operator can make room.
 */
const FULL = new Set(['ENOSPC', 'EDQUOT']);

/** True when `err`, or the error it wraps (`cause`), is a full file system or a spent quota. */
export function isStorageFull(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | null | undefined, depth = 0; e && depth < 3; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && FULL.has(e.code)) return true;
  }
  return false;
}
