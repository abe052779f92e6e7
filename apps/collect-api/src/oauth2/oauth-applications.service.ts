import { Injectable, Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { hashToken, newOpaqueSecret, safeEqual } from '../crypto/secrets.js';
import type { NewApplication, OAuthApplicationEntity } from './oauth2.entities.js';
import { OAuthError } from './oauth2.errors.js';
import { OAuth2Repository } from './oauth2.repository.js';
import type { TokenRequestDto } from './oauth2.dto.js';

export const GRANT_TYPE_AUTHORIZATION_CODE = 'authorization-code';

/** Registration of client applications and client authentication at the token endpoint. */
@Injectable()
export class OAuthApplicationsService {
  private readonly logger = new Logger('OAuthApplications');

  constructor(private readonly repo: OAuth2Repository) {}

  /** Stores an application; the secret is returned here only, never again. */
  async create(ownerId: number | null, input: NewApplication): Promise<{ app: OAuthApplicationEntity; clientSecret: string | null }> {
    const { name, clientType } = input;
    const clientSecret = clientType === 'confidential' ? newOpaqueSecret() : null;
    const app = await this.repo.insertApplication({
      clientId: randomBytes(20).toString('base64url'),
      clientSecretHash: clientSecret ? hashToken(clientSecret) : null,
      name,
      clientType,
      authorizationGrantType: GRANT_TYPE_AUTHORIZATION_CODE,
      redirectUris: input.redirectUris.join(' '),
      userId: ownerId,
    });
    this.logger.log({ applicationId: app.id, clientId: app.clientId, ownerId }, 'oauth application registered');
    return { app, clientSecret };
  }

  findByClientId(clientId: string): Promise<OAuthApplicationEntity | null> {
    return this.repo.findApplicationByClientId(clientId.slice(0, 100));
  }

  /** Applications the caller manages: their own, or every one for a platform admin. */
  list(userId: number, isSuperuser: boolean): Promise<OAuthApplicationEntity[]> {
    return this.repo.listApplications(isSuperuser ? null : userId);
  }

  /** The application when the caller may manage it, else null (answered as 404). */
  async findManaged(id: number, userId: number, isSuperuser: boolean): Promise<OAuthApplicationEntity | null> {
    const app = await this.repo.findApplication(id);
    return app && (isSuperuser || app.userId === userId) ? app : null;
  }

  async delete(app: OAuthApplicationEntity): Promise<void> {
    await this.repo.deleteApplication(app.id);
    this.logger.log({ applicationId: app.id, clientId: app.clientId }, 'oauth application deleted');
  }

  /**
   * Client authentication at /o/token: HTTP Basic `client_id:client_secret` (RFC 6749 §2.3.1,
   * form-urlencoded parts) or `client_id`/`client_secret` body fields. A public client sends
   * only `client_id`. Any mismatch: invalid_client (401).
   */
  async authenticateClient(authorization: string | undefined, body: TokenRequestDto): Promise<OAuthApplicationEntity> {
    let clientId: string | undefined;
    let secret: string | undefined;
    const basic = /^basic\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (basic) {
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new OAuthError('invalid_client', 'Client authentication failed.');
      clientId = safeDecode(decoded.slice(0, colon));
      secret = safeDecode(decoded.slice(colon + 1));
    } else {
      clientId = body.client_id;
      secret = body.client_secret;
    }
    if (!clientId) throw new OAuthError('invalid_client', 'Client authentication failed.');
    const app = await this.findByClientId(clientId);
    if (!app) throw new OAuthError('invalid_client', 'Client authentication failed.');
    if (app.clientType === 'confidential') {
      if (!secret || !app.clientSecretHash || !safeEqual(hashToken(secret), app.clientSecretHash)) {
        throw new OAuthError('invalid_client', 'Client authentication failed.');
      }
    } else if (secret) {
      throw new OAuthError('invalid_client', 'Public clients do not authenticate with a secret.');
    }
    if (body.client_id !== undefined && body.client_id !== app.clientId) throw new OAuthError('invalid_client', 'client_id does not match the authenticated client.');
    return app;
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}
