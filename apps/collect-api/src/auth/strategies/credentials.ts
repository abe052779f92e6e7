import type { HttpRequest as Request } from '../http-types.js';

/** The credentials part of the Authorization header, put there by the AuthGuard after parsing. */
export function credentialsOf(req: Request): string {
  return (req as Request & { authCredentials?: string }).authCredentials ?? '';
}
