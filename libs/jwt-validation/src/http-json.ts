/** Largest discovery document / key set read; a misbehaving endpoint must not exhaust memory. */
const MAX_BODY_BYTES = 512 * 1024;

/** GET a JSON object with a timeout; throws an Error naming the address on any failure. */
export async function fetchJsonObject(url: string, timeoutMs: number): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new Error(`GET ${url} failed: ${(err as Error).message}`, { cause: err });
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new Error(`GET ${url} answered ${res.status}`);
  }
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) {
    await res.body?.cancel();
    throw new Error(`GET ${url}: body of ${declared} bytes is too large`);
  }
  const text = await res.text();
  if (text.length > MAX_BODY_BYTES) throw new Error(`GET ${url}: body is too large`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`GET ${url}: body is not JSON`);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new Error(`GET ${url}: body is not a JSON object`);
  return body as Record<string, unknown>;
}
