/** The OpenRosa protocol version every OpenRosa answer names. */
export const OPENROSA_VERSION = '1.0';

/**
 * The headers of an OpenRosa answer (OpenRosa Request/Response API): the version, and on the
 * submission paths the largest body the server accepts, so a client splits bigger submissions.
 */
export function setOpenRosaHeaders(res: { setHeader(name: string, value: string): void }, acceptContentLength?: number): void {
  res.setHeader('X-OpenRosa-Version', OPENROSA_VERSION);
  if (acceptContentLength !== undefined) res.setHeader('X-OpenRosa-Accept-Content-Length', String(acceptContentLength));
}
