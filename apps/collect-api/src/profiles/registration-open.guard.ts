import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { HttpErrorWithHeaders } from '@collect/contracts';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';
import { CollectConfig } from '../config/collect-config.js';

/**
 * PROFILES_REGISTRATION_ENABLED=false leaves registration to platform admins. A guard, so the
 * refusal comes before the body is validated: a closed registration says so, whatever is sent.
 */
@Injectable()
export class RegistrationOpenGuard implements CanActivate {
  constructor(private readonly config: CollectConfig) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.config.PROFILES_REGISTRATION_ENABLED) return true;
    const caller = context.switchToHttp().getRequest<{ user?: AuthenticatedUser }>().user;
    if (caller?.isSuperuser) return true;
    throw new HttpErrorWithHeaders(403, caller ? 'Registration is disabled; only platform admins create users.' : 'Registration is disabled.', {});
  }
}
