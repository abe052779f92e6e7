import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject, type SecuritySchemeObject } from '@nestjs/swagger';

export interface OpenApiInfo {
  title: string;
  description: string;
  version?: string;
  /** Security schemes by the names the controllers' `@ApiSecurity(...)` use. */
  securitySchemes?: Record<string, SecuritySchemeObject>;
}

/** The 4xx body every endpoint may answer (docs/api-conventions.md §Errors), unless it documents its own. */
const ERROR_SCHEMAS = {
  ErrorDetail: {
    type: 'object',
    required: ['detail'],
    properties: { detail: { type: 'string' } },
    description: 'A non-field error: `{"detail": "..."}`.',
  },
  FieldErrors: {
    type: 'object',
    additionalProperties: { type: 'array', items: { type: 'string' } },
    description: 'Field errors: `{"<field>": ["message", ...]}`; nested fields under their top-level field, each message prefixed with its path (`[0].column: ...`).',
    example: { name: ['This field is required.'] },
  },
};

/**
 * The OpenAPI document of a service, built from its controllers and DTOs, with every object's
 * keys sorted: the same bytes for the same code, whichever order Nest scanned things in. Served
 * by the service at `{docsPath}-json` and checked in under docs/openapi/ (`pnpm openapi`).
 */
export function buildOpenApiDocument(app: INestApplication, info: OpenApiInfo): OpenAPIObject {
  const builder = new DocumentBuilder().setTitle(info.title).setDescription(info.description).setVersion(info.version ?? '1.0');
  for (const [name, scheme] of Object.entries(info.securitySchemes ?? {})) builder.addSecurity(name, scheme);
  const config = builder.build();
  const document = SwaggerModule.createDocument(app, config, { operationIdFactory: (controller, method) => `${controller.replace(/Controller$/, '')}_${method}` });
  document.components ??= {};
  document.components.schemas = { ...(document.components.schemas ?? {}), ...ERROR_SCHEMAS } as typeof document.components.schemas;
  for (const path of Object.values(document.paths)) {
    for (const op of Object.values(path)) {
      if (!op || typeof op !== 'object' || !('responses' in op)) continue;
      const responses = (op as { responses: Record<string, unknown> }).responses;
      if (Object.keys(responses).some((s) => s.startsWith('4'))) continue;
      responses['4XX'] = {
        description: 'Refused: 400 bad input, 401 no or bad credentials, 403 not allowed, 404 not found or not visible, 413, 415, 429.',
        content: { 'application/json': { schema: { oneOf: [{ $ref: '#/components/schemas/ErrorDetail' }, { $ref: '#/components/schemas/FieldErrors' }] } } },
      };
    }
  }
  return sortKeys(document) as OpenAPIObject;
}

/** Object keys sorted at every level; arrays keep their order (it means something there). */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!value || typeof value !== 'object') return value;
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]));
}

/** The checked-in text: two-space JSON and a final newline. */
export function openApiText(document: OpenAPIObject): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/**
 * What an OpenAPI document leaves undescribed: an operation without a success response with a
 * schema (204 aside) or without an error response, or a POST/PUT/PATCH without a request body
 * (`bodyless` lists the paths that take none). The services' drift tests expect none.
 */
export function openApiGaps(document: OpenAPIObject, bodyless: RegExp = /$^/): string[] {
  const gaps: string[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item as Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>; requestBody?: unknown }>)) {
      const name = `${method.toUpperCase()} ${path}`;
      const codes = Object.keys(op.responses ?? {});
      const success = codes.filter((c) => c.startsWith('2'));
      if (!success.length) gaps.push(`${name}: no 2xx response`);
      for (const c of success) if (c !== '204' && !Object.values(op.responses![c]!.content ?? {}).some((m) => m.schema)) gaps.push(`${name}: ${c} without a schema`);
      if (!codes.some((c) => c.startsWith('4'))) gaps.push(`${name}: no 4xx response`);
      if (['post', 'put', 'patch'].includes(method) && !op.requestBody && !bodyless.test(path)) gaps.push(`${name}: no request body`);
    }
  }
  return gaps;
}
