import { Logger } from '@nestjs/common';
import { startupLogger } from './startup-logger.js';

/** Lines as pino writes them (synchronously to this destination). */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, destination: { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) } };
}

describe('startupLogger', () => {
  it('writes each Nest call at once as one JSON line with the context Nest appends', () => {
    const { lines, destination } = capture();
    const logger = new Logger('TypeOrmModule');
    Logger.overrideLogger(startupLogger('collect-worker', 'info', destination));
    try {
      logger.log('dependencies initialized');
      logger.error('Unable to connect to the database. Retrying (1)...', 'Error: connect ECONNREFUSED\n    at x');
      new Logger('JobQueue').warn({ queue: 'q', err: 'refused' }, 'queue error');
      logger.debug('below the level');
    } finally {
      Logger.overrideLogger(false);
    }
    expect(lines).toEqual([
      expect.objectContaining({ level: 30, service: 'collect-worker', context: 'TypeOrmModule', msg: 'dependencies initialized' }),
      expect.objectContaining({ level: 50, context: 'TypeOrmModule', stack: 'Error: connect ECONNREFUSED\n    at x', msg: 'Unable to connect to the database. Retrying (1)...' }),
      expect.objectContaining({ level: 40, context: 'JobQueue', queue: 'q', err: 'refused', msg: 'queue error' }),
    ]);
  });

  it('redacts credentials as the request logger does', () => {
    const { lines, destination } = capture();
    const log = startupLogger('cas', 'info', destination);
    log.warn({ client: { client_secret: 's3cret' }, headers: { authorization: 'Bearer abc' } }, 'odd', 'Ctx');
    log.error(new Error('boom'), 'Ctx');
    expect(JSON.stringify(lines)).not.toMatch(/s3cret|Bearer abc/);
    expect(lines[0]).toMatchObject({ context: 'Ctx', client: { client_secret: '[redacted]' }, headers: { authorization: '[redacted]' } });
    expect(lines[1]).toMatchObject({ level: 50, context: 'Ctx', msg: 'boom', err: expect.objectContaining({ message: 'boom' }) });
  });
});
