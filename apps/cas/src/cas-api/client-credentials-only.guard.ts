import { HttpStatus, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { HttpErrorWithHeaders } from '@collect/contracts';
import { ACCESS_TOKEN_PROPERTY, type VerifiedAccessToken } from '@collect/jwt-validation';
import { GRANT_TYPE_CLAIM } from '../oidc/provider-factory.js';

export const NOT_A_MACHINE_TOKEN = 'cas-api accepts only tokens of the client credentials grant.';

/**
 * After BearerTokenGuard: cas-api is for services (spec 5.3: on-boarding authenticates with
 * client credentials), so a token a user obtained (code flow, implicit) is refused with 403
 * even when it carries the cas-api audience and scopes. A client-credentials token is the one
 * the CAS marked `gty: client_credentials`, whose subject is the client itself.
 */
@Injectable()
export class ClientCredentialsOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const token = context.switchToHttp().getRequest<Record<string, unknown>>()[ACCESS_TOKEN_PROPERTY] as VerifiedAccessToken | undefined;
    const claims = token?.claims;
    if (!claims || claims[GRANT_TYPE_CLAIM] !== 'client_credentials' || !claims.client_id || claims.sub !== claims.client_id) {
      throw new HttpErrorWithHeaders(HttpStatus.FORBIDDEN, NOT_A_MACHINE_TOKEN, {});
    }
    return true;
  }
}
