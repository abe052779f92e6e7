#!/usr/bin/env node
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { baseLoggerOptions, loadConfigOrExit } from '@collect/platform';
import type { LoggerService } from '@nestjs/common';
import { pino } from 'pino';
import { ZodError } from 'zod';
import { CliModule } from './cli/cli.module.js';
import { runCommand, UsageError, USAGE } from './cli/commands.js';
import { loadCasConfig } from './config/cas-config.js';
import { AccountError } from './accounts/accounts.service.js';
import { SeedError } from './clients/seed-format.js';

/** Audit events as JSON on stderr; stdout carries only the command's results. */
function stderrLogger(level: string): LoggerService {
  const log = pino(baseLoggerOptions('cas-cli', level), pino.destination(2));
  const write = (lvl: 'info' | 'warn' | 'error' | 'debug') => (message: unknown, context?: string) =>
    typeof message === 'object' ? log[lvl]({ context, ...(message as object) }) : log[lvl]({ context }, String(message));
  return { log: write('info'), warn: write('warn'), error: write('error'), debug: write('debug'), verbose: write('debug') };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  const config = loadConfigOrExit(loadCasConfig);
  const ctx = await NestFactory.createApplicationContext(CliModule.forRoot(config), { logger: stderrLogger(config.LOG_LEVEL === 'silent' ? 'silent' : 'info') });
  try {
    await runCommand(ctx, argv, (line) => process.stdout.write(`${JSON.stringify(line)}\n`));
  } finally {
    await ctx.close();
  }
}

main().catch((err) => {
  if (err instanceof UsageError || err instanceof AccountError || err instanceof SeedError || err instanceof ZodError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    const message = err instanceof ZodError ? err.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') : (err as Error).message;
    process.stderr.write(`cas: ${message}\n\n${USAGE}`);
    process.exit(64); // EX_USAGE
  }
  process.stderr.write(`cas: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
