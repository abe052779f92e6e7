import {
  applyDecorators,
  createParamDecorator,
  HttpStatus,
  Inject,
  Injectable,
  Logger,
  Module,
  SetMetadata,
  UseGuards,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  type ModuleMetadata,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { HttpErrorWithHeaders, UnauthorizedError } from '@collect/contracts';
import { JwtValidationError, KeySourceUnavailableError } from './errors.js';
import type { JwtValidatorOptions } from './options.js';
import { missingScopes } from './scopes.js';
import { JwtValidator, type VerifiedAccessToken } from './validator.js';

const REQUIRED_SCOPES = 'jwt-validation:required-scopes';

/** Request property the guard puts the verified token on (not `user`: apps give that their own meaning). */
export const ACCESS_TOKEN_PROPERTY = 'accessToken';

type RequestLike = { headers: Record<string, string | string[] | undefined>; [ACCESS_TOKEN_PROPERTY]?: VerifiedAccessToken };

/** RFC 6750 §2.1: `Authorization: Bearer <token>`, scheme case-insensitive. Undefined when absent or another scheme. */
export function extractBearerToken(authorization: string | string[] | undefined): string | undefined {
  const value = Array.isArray(authorization) ? authorization[0] : authorization;
  if (!value) return undefined;
  const match = /^Bearer +([^\s]+) *$/i.exec(value);
  return match ? match[1] : undefined;
}

/** RFC 6750 §3 challenge; the value always starts with `Bearer` (docs/api-conventions.md §Errors). */
function challenge(error?: string, description?: string, scope?: string): string {
  const params = ['realm="api"'];
  if (error) params.push(`error="${error}"`);
  if (description) params.push(`error_description="${description.replace(/["\\]/g, "'")}"`);
  if (scope) params.push(`scope="${scope}"`);
  return `Bearer ${params.join(', ')}`;
}

/**
 * Lets a request through only with a valid CAS access token holding every scope the route
 * names with @RequireScopes. 401 (WWW-Authenticate: Bearer) for a missing or bad token, 403
 * for missing scopes, 503 when the issuer's keys cannot be had at all.
 */
@Injectable()
export class BearerTokenGuard implements CanActivate {
  private readonly logger = new Logger('BearerTokenGuard');

  constructor(
    @Inject(JwtValidator) private readonly validator: JwtValidator,
    @Inject(Reflector) private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<RequestLike>();
    const raw = req.headers.authorization;
    const token = extractBearerToken(raw);
    if (!token) {
      const detail = raw ? 'Authorization header must be "Bearer <access token>".' : 'Authentication credentials were not provided.';
      throw new UnauthorizedError(detail, raw ? challenge('invalid_request', detail) : challenge());
    }
    let verified: VerifiedAccessToken;
    try {
      verified = await this.validator.verify(token);
    } catch (err) {
      if (err instanceof JwtValidationError) {
        this.logger.debug(`token refused: ${err.code}`);
        throw new UnauthorizedError(err.message, challenge('invalid_token', err.message));
      }
      if (err instanceof KeySourceUnavailableError) {
        this.logger.warn(err.message);
        throw new HttpErrorWithHeaders(HttpStatus.SERVICE_UNAVAILABLE, 'Authentication service is unavailable; try again shortly.', { 'Retry-After': '5' });
      }
      throw err;
    }
    const required = this.reflector.getAllAndOverride<string[] | undefined>(REQUIRED_SCOPES, [context.getHandler(), context.getClass()]) ?? [];
    const missing = missingScopes(verified.scopes, required);
    if (missing.length > 0) {
      const detail = `Token lacks the required scope${missing.length === 1 ? '' : 's'}: ${missing.join(' ')}.`;
      throw new HttpErrorWithHeaders(HttpStatus.FORBIDDEN, detail, { 'WWW-Authenticate': challenge('insufficient_scope', detail, required.join(' ')) });
    }
    req[ACCESS_TOKEN_PROPERTY] = verified;
    return true;
  }
}

/** Scopes a route needs, all of them (method-level overrides class-level). */
export const RequireScopes = (...scopes: string[]) => SetMetadata(REQUIRED_SCOPES, scopes);

/** Guard a controller or route by CAS access token, optionally with required scopes. */
export const BearerAuth = (...scopes: string[]) => applyDecorators(UseGuards(BearerTokenGuard), RequireScopes(...scopes));

/** The verified token of the request (after BearerTokenGuard). */
export const AccessToken = createParamDecorator((_data: unknown, ctx: ExecutionContext): VerifiedAccessToken | undefined => {
  return ctx.switchToHttp().getRequest<RequestLike>()[ACCESS_TOKEN_PROPERTY];
});

export interface JwtValidationAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  inject?: Array<string | symbol | (abstract new (...args: never[]) => unknown) | (new (...args: never[]) => unknown)>;
  useFactory: (...args: never[]) => JwtValidatorOptions | Promise<JwtValidatorOptions>;
}

/**
 * Provides one JwtValidator (one issuer + audience) and the guard to the importing module.
 * Keys are fetched lazily on the first token, so a service starts even when the CAS is not up.
 */
@Module({})
export class JwtValidationModule {
  static forRoot(options: JwtValidatorOptions): DynamicModule {
    return JwtValidationModule.forRootAsync({ useFactory: () => options });
  }

  static forRootAsync(options: JwtValidationAsyncOptions): DynamicModule {
    return {
      module: JwtValidationModule,
      imports: options.imports ?? [],
      providers: [
        {
          provide: JwtValidator,
          inject: options.inject ?? [],
          useFactory: async (...args: never[]) => {
            const logger = new Logger('JwtValidation');
            const resolved = await options.useFactory(...args);
            return new JwtValidator({ logger: { warn: (m) => logger.warn(m), debug: (m) => logger.debug(m) }, ...resolved });
          },
        },
        BearerTokenGuard,
      ],
      exports: [JwtValidator, BearerTokenGuard],
    };
  }
}
