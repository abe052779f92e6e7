import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import { baseLoggerOptions, safeUrl } from './logging.js';

/**
 * nestjs-pino with our redaction and without query strings (codes and tokens live there).
 * No `customProps`: pino-http makes a second child logger per request for whatever object it
 * answers, even an empty one (1.1 KB of garbage per request; docs/architecture.md, "The request
 * pipeline").
 */
export function structuredLoggerModule(service: string, level: string) {
  return LoggerModule.forRoot({
    pinoHttp: {
      ...baseLoggerOptions(service, level),
      autoLogging: { ignore: (req: IncomingMessage) => (req.url ?? '').startsWith('/health/') },
      serializers: {
        req: (req: IncomingMessage & { id?: unknown }) => ({ id: req.id, method: req.method, url: safeUrl(req.url) }),
        res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
      },
    },
  });
}
