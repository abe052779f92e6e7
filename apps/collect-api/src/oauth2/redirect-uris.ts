/** An absolute http(s) URL without fragment, at most 2000 characters (RFC 6749 §3.1.2). */
export function isAllowedRedirectUri(uri: string): boolean {
  try {
    const u = new URL(uri);
    return (u.protocol === 'https:' || u.protocol === 'http:') && !uri.includes('#') && uri.length <= 2000;
  } catch {
    return false;
  }
}

/** Registered redirect URIs are stored space-separated, as the DRF-world providers store them. */
export function splitRedirectUris(value: string): string[] {
  return value.split(/\s+/).filter(Boolean);
}
