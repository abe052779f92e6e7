import { z } from 'zod';

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses the environment once against a zod object schema. Every bad variable is listed in one
 * error, named by its variable, so an operator fixes them all in one go.
 */
export function parseEnv<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const name = issue.path.join('.') || '(environment)';
    const value = env[String(issue.path[0])];
    const shown = value === undefined ? 'unset' : `got "${redactIfSecret(String(issue.path[0]), value)}"`;
    return `${name}: ${issue.message} (${shown})`;
  });
  throw new ConfigError(problems);
}

function redactIfSecret(name: string, value: string): string {
  return /SECRET|PASSWORD|KEY|KEK|TOKEN|URL/i.test(name) ? '***' : value.slice(0, 80);
}

const PORT_MESSAGE = 'must be a port number 1-65535';
const portNumber = () => z.coerce.number({ message: PORT_MESSAGE }).int(PORT_MESSAGE).min(1, PORT_MESSAGE).max(65535, PORT_MESSAGE);

/** Field builders shared by both services, so ports and flags are read the same way. */
export const envField = {
  port: (fallback: number) => portNumber().default(fallback),
  /** A port with no default: undefined when unset. */
  optionalPort: () => portNumber().optional(),
  int: (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max).default(fallback),
  bool: (fallback: boolean) =>
    z.enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' }).default(fallback ? 'true' : 'false').transform((v) => v === 'true' || v === '1' || v === 'yes'),
  url: () => z.string().url('must be an absolute URL'),
  list: (fallback: string) => z.string().default(fallback).transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean)),
  logLevel: () => z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  nodeEnv: () => z.enum(['development', 'test', 'production']).default('development'),
};

/** Ends the process with the configuration problems on stderr (not through the logger, which needs config). */
/** The loaded configuration, or exit 78 with the problems listed (every entry point starts so). */
export function loadConfigOrExit<T>(load: () => T): T {
  try {
    return load();
  } catch (err) {
    exitOnConfigError(err);
  }
}

export function exitOnConfigError(err: unknown): never {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(78); // EX_CONFIG
  }
  throw err;
}
