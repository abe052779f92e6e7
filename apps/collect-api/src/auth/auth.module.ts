import { Global, Module, RequestMethod, type MiddlewareConsumer, type NestModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { UsersModule } from '../users/users.module.js';
import { AuthGuard } from './auth.guard.js';
import { BearerResolvers } from './bearer-resolvers.js';
import { CorsMiddleware } from './cors.middleware.js';
import { AuthThrottleService } from './auth-throttle.service.js';
import { PasswordLoginService } from './password-login.service.js';
import { PersonalTokens } from './personal-tokens.js';
import { BasicStrategy } from './strategies/basic.strategy.js';
import { BearerStrategy } from './strategies/bearer.strategy.js';
import { TempTokenStrategy } from './strategies/temp-token.strategy.js';
import { TokenStrategy } from './strategies/token.strategy.js';

/**
 * Authentication for every route: the global AuthGuard and its four strategies (their `validate`),
 * the Bearer token sources, the login lockout and CORS. Global, so feature modules inject
 * BearerResolvers or PasswordLoginService without importing it.
 */
@Global()
@Module({
  imports: [UsersModule],
  providers: [
    BasicStrategy,
    TokenStrategy,
    TempTokenStrategy,
    BearerStrategy,
    BearerResolvers,
    AuthThrottleService,
    PasswordLoginService,
    CorsMiddleware,
    PersonalTokens,
    { provide: APP_GUARD, useClass: AuthGuard },
  ],
  exports: [BearerResolvers, AuthThrottleService, PasswordLoginService, PersonalTokens],
})
export class AuthModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(CorsMiddleware).forRoutes({ path: '*path', method: RequestMethod.ALL });
  }
}
