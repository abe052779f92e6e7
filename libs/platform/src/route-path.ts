/**
 * The path a rate-limit rule compares with its route (docs/security.md, "Rate limits, quotas and
 * forwarding input"): routers match paths ignoring letter case (Express, koa-router in
 * oidc-provider), and a client may percent-encode letters, double slashes or add a trailing one,
 * so a rule comparing the raw path is skipped by `/connect/Token`. The query is dropped, each
 * percent-encoded byte decoded (repeatedly, so `%2574` is counted as well), letters lower-cased,
 * runs of slashes collapsed and trailing slashes removed. Counting a variant the router would
 * not serve is harmless; missing one it serves is the fault this prevents.
 */
export function normalisedRoutePath(url: string | undefined): string {
  let path = (url ?? '/').split(/[?#]/, 1)[0];
  for (let i = 0; i < 3 && path.includes('%'); i++) {
    const decoded = path.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (decoded === path) break;
    path = decoded;
  }
  path = path.toLowerCase().replace(/\\/g, '/').replace(/\/{2,}/g, '/').replace(/\/+$/, '');
  return path || '/';
}
