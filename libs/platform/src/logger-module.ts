import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import { pino, type DestinationStream } from 'pino';
import { baseLoggerOptions, safeUrl } from './logging.js';

/**
 * nestjs-pino with our redaction and without query strings (codes and tokens live there).
 * No `customProps`: pino-http makes a second child logger per request for whatever object it
 * answers, even an empty one (1.1 KB of garbage per request; docs/architecture.md, "The request
 * pipeline").
 */
export function structuredLoggerModule(service: string, level: string) {
  return LoggerModule.forRoot({ pinoHttp: [requestLoggerOptions(service, level), logDestination()] });
}

/**
 * Standard output, written asynchronously: lines logged while a write is in flight go together
 * in the next one. Written synchronously, every request line at the default `info` level was a
 * write(2) that waited for the reader of the pipe (a container's log collector, a terminal):
 * 50 to 180 µs of wall time per request on two cores, by their load, against about 17 µs this way
 * (`pnpm bench request-logging`; docs/operations.md, "Logging"). What is buffered is written at
 * exit (pino flushes on `exit`); only a killed process (SIGKILL, out of memory) loses the last lines.
 */
export function logDestination(fd = 1): DestinationStream {
  return pino.destination({ fd, sync: false });
}

/** The options of the request logger (pino-http): one line per answered request at `info`. */
export function requestLoggerOptions(service: string, level: string) {
  return {
    ...baseLoggerOptions(service, level),
    autoLogging: { ignore: (req: IncomingMessage) => (req.url ?? '').startsWith('/health/') },
    serializers: {
      req: (req: IncomingMessage & { id?: unknown }) => ({ id: req.id, method: req.method, url: safeUrl(req.url) }),
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
    },
  };
}
