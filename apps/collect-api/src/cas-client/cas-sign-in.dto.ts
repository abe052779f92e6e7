import { Text } from '@collect/contracts';

/** `GET /auth/login`. */
export class SignInQueryDto {
  @Text({ description: 'A same-site path to return to after sign-in (anything else: /login).' })
  return_to?: string;
}

/**
 * `GET /auth/callback`: the CAS's authorization response (RFC 6749 §4.1.2, OpenID Connect
 * Core §3.1.2.5). openid-client checks it against the pending sign-in; other parameters are ignored.
 */
export class SignInCallbackQueryDto {
  @Text() code?: string;
  @Text() state?: string;
  @Text() iss?: string;
  @Text() error?: string;
  @Text() error_description?: string;
  @Text() session_state?: string;
}
