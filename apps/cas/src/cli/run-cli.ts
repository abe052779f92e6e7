import { NestFactory } from '@nestjs/core';
import { baseLoggerOptions } from '@collect/platform';
import type { LoggerService } from '@nestjs/common';
import { pino } from 'pino';
import { ZodError } from 'zod';
import { AccountError } from '../accounts/accounts.service.js';
import { SeedError } from '../clients/seed-format.js';
import type { CasConfig } from '../config/cas-config.js';
import { CliModule } from './cli.module.js';
import { runCommand, UsageError, USAGE } from './commands.js';

/** Where a run of the CLI writes: results (one JSON line each) and audit events with messages. */
export interface CliOutput {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Audit events as JSON lines on `write` (the binary's stderr); stdout carries only the command's results. */
function auditLogger(level: string, write: (text: string) => void): LoggerService {
  const log = pino(baseLoggerOptions('cas-cli', level), { write });
  const at = (lvl: 'info' | 'warn' | 'error' | 'debug') => (message: unknown, context?: string) =>
    typeof message === 'object' ? log[lvl]({ context, ...(message as object) }) : log[lvl]({ context }, String(message));
  return { log: at('info'), warn: at('warn'), error: at('error'), debug: at('debug'), verbose: at('debug') };
}

/**
 * One run of the admin CLI, `cas <command> [options]`: its exit status (0; 64, EX_USAGE, for a
 * refused command, with the message and the usage on stderr; 1 for anything else). The binary
 * (cli.ts) is this with the process's arguments, configuration and streams; the tests run it in
 * their own process, where a process per call costs seconds on a busy machine.
 */
export async function runCli(argv: string[], loadConfig: () => CasConfig, io: CliOutput): Promise<number> {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
    io.stdout(USAGE);
    return 0;
  }
  const config = loadConfig();
  try {
    const ctx = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: auditLogger(config.LOG_LEVEL === 'silent' ? 'silent' : 'info', io.stderr) });
    try {
      await runCommand(ctx, argv, (line) => io.stdout(`${JSON.stringify(line)}\n`));
    } finally {
      await ctx.close();
    }
    return 0;
  } catch (err) {
    if (err instanceof UsageError || err instanceof AccountError || err instanceof SeedError || err instanceof ZodError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      const message = err instanceof ZodError ? err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : (err as Error).message;
      io.stderr(`cas: ${message}\n\n${USAGE}`);
      return 64; // EX_USAGE
    }
    io.stderr(`cas: ${err instanceof Error ? err.stack : String(err)}\n`);
    return 1;
  }
}
