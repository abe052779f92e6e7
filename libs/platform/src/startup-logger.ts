import type { LoggerService } from '@nestjs/common';
import { pino, type DestinationStream } from 'pino';
import { baseLoggerOptions } from './logging.js';

/**
 * Nest's logger while a module graph is being built, before nestjs-pino's Logger exists: the
 * same JSON lines, service name and redaction as that logger, written at once. With Nest's
 * `bufferLogs` instead, a start-up that stalls (TypeOrmModule retries a refused database
 * connection ten times, 3 s apart) printed nothing until it gave up, and a process killed
 * meanwhile printed nothing at all (docs/operations.md, "Start-up").
 * `configureHttpApp` / the worker then hand over to nestjs-pino with `app.useLogger`.
 */
export function startupLogger(service: string, level: string, destination?: DestinationStream): LoggerService {
  const log = destination ? pino(baseLoggerOptions(service, level), destination) : pino(baseLoggerOptions(service, level));
  // Nest appends the context as the last argument (ConsoleLogger's convention); errors carry a
  // stack before it; code written for nestjs-pino passes (fields, message).
  const write = (method: 'info' | 'warn' | 'error' | 'debug' | 'trace' | 'fatal') => (message: unknown, ...params: unknown[]) => {
    const rest = [...params];
    const context = rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const text = rest.find((p): p is string => typeof p === 'string');
    if (message instanceof Error) return log[method]({ context, err: message }, message.message);
    if (typeof message === 'object' && message !== null) return log[method]({ context, ...message }, text ?? '');
    log[method]({ context, ...(text && (method === 'error' || method === 'fatal') ? { stack: text } : {}) }, String(message));
  };
  return { log: write('info'), warn: write('warn'), error: write('error'), debug: write('debug'), verbose: write('trace'), fatal: write('fatal') };
}
