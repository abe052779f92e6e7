/**
 * An RFC 6749 error of the token endpoint (`{"error", "error_description"}`), or of the
 * authorize endpoint (then sent to the client's redirect_uri as query parameters).
 */
export class OAuthError extends Error {
  constructor(
    readonly error:
      | 'invalid_request'
      | 'invalid_client'
      | 'invalid_grant'
      | 'unauthorized_client'
      | 'unsupported_grant_type'
      | 'invalid_scope'
      | 'access_denied'
      | 'unsupported_response_type'
      | 'server_error',
    readonly description: string,
    readonly status = error === 'invalid_client' ? 401 : 400,
  ) {
    super(`${error}: ${description}`);
  }
}
