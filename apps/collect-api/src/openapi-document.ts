import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { buildOpenApiDocument, type OpenApiInfo } from '@collect/platform';
import { AppModule } from './app.module.js';
import { loadCollectConfig } from './config/collect-config.js';

/** What the document says about the service; its security schemes are the names `@RequireAuth()` lists. */
export const COLLECT_API_DOCS: OpenApiInfo = {
  title: 'collect-api',
  description: 'Data-collection JSON API: forms, submissions, rest services, media. Errors: docs/security.md "Input validation".',
  securitySchemes: {
    basic: { type: 'http', scheme: 'basic', description: 'username:password (argon2id, per-user lockout).' },
    token: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`Token <api_token>` (40 hex, from GET /api/v1/user).' },
    temptoken: { type: 'apiKey', in: 'header', name: 'Authorization', description: '`TempToken <temp_token>` (valid DEFAULT_TEMP_TOKEN_EXPIRY_TIME seconds).' },
    bearer: { type: 'http', scheme: 'bearer', description: 'An access token of the local provider (/o/token) or a CAS-issued JWT; scopes read, write.' },
  },
};

/**
 * The document from the controllers and DTOs, without a database or Redis: the module graph in
 * preview mode (no provider is instantiated). `pnpm openapi` writes it to
 * docs/openapi/collect-api.json; openapi-document.spec.ts fails when that file is stale.
 */
export async function collectOpenApiDocument(): Promise<OpenAPIObject> {
  const app = await NestFactory.create(AppModule.forRoot(loadCollectConfig({ NODE_ENV: 'test' })), { preview: true, logger: false });
  try {
    return buildOpenApiDocument(app, COLLECT_API_DOCS);
  } finally {
    await app.close();
  }
}
