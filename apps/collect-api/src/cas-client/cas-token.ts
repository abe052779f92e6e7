/**
 * Tells a CAS access token from a local one without verifying anything: local OAuth 2.0 tokens
 * are opaque (no dots); a CAS token is a compact JWS whose payload names the CAS issuer. Only
 * the routing decision rests on the unverified `iss`; the validator checks everything after.
 */
export function isCasIssuedJwt(token: string, issuer: string): boolean {
  // Shape only; the validator refuses anything malformed once the token is routed to it.
  const first = token.indexOf('.');
  const second = token.indexOf('.', first + 1);
  if (first <= 0 || second <= first + 1 || token.indexOf('.', second + 1) !== -1) return false;
  try {
    const payload: unknown = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'));
    return typeof payload === 'object' && payload !== null && (payload as { iss?: unknown }).iss === issuer;
  } catch {
    return false;
  }
}

/**
 * A client-credentials token carries no user: the CAS sets `sub` to the client's own id. A user
 * token's `sub` is the CAS user id (a UUID) and its `client_id` the application that asked.
 */
export function isClientCredentialsToken(claims: { sub?: string; client_id?: string }): boolean {
  return typeof claims.client_id === 'string' && claims.sub === claims.client_id;
}
