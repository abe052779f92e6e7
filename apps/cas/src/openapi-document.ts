import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { OpenAPIObject } from '@nestjs/swagger';
import { buildOpenApiDocument, type OpenApiInfo } from '@collect/platform';
import { AppModule } from './app.module.js';
import { loadCasConfig } from './config/cas-config.js';

/**
 * The CAS's own API (cas-api and health). oidc-provider's endpoints (`/connect/*`, discovery at
 * `/.well-known/openid-configuration`) are not Nest controllers and are described by discovery.
 */
export const CAS_DOCS: OpenApiInfo = {
  title: 'cas',
  description: 'Central authentication service (OpenID Connect / OAuth 2.0, see /.well-known/openid-configuration) and its user-search API.',
  securitySchemes: {
    bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A client-credentials access token for the cas-api resource with scopes adminui-api-wrapper and adminui-api-wrapper.users.search.' },
  },
};

/** The document from the controllers and DTOs in preview mode (no database). `pnpm openapi` writes it to docs/openapi/cas.json. */
export async function casOpenApiDocument(): Promise<OpenAPIObject> {
  const app = await NestFactory.create(AppModule.forRoot(loadCasConfig({ NODE_ENV: 'test' })), { preview: true, logger: false });
  try {
    return buildOpenApiDocument(app, CAS_DOCS);
  } finally {
    await app.close();
  }
}
