/**
 * Known secrets of a log-hygiene test: each one is recorded as the test creates or receives it,
 * then every captured log line is searched for every secret. Too-short values are refused, since
 * they would match by chance and prove nothing.
 */
export class SecretLedger {
  private readonly secrets = new Map<string, string>();

  /** Records `value` under `name` and returns it (use it inline where the secret is made). */
  keep(name: string, value: unknown): string {
    if (typeof value !== 'string') throw new Error(`secret ${name} is not a string: ${typeof value}`);
    if (value.length < 8) throw new Error(`secret ${name} is shorter than 8 characters`);
    this.secrets.set(name, value);
    return value;
  }

  get(name: string): string {
    const value = this.secrets.get(name);
    if (value === undefined) throw new Error(`no secret named ${name}`);
    return value;
  }

  get size(): number {
    return this.secrets.size;
  }

  /** One entry per (secret, line) where a line holds a secret: `<name> (<source>): <line start>`. */
  leaks(lines: readonly string[], source: string): string[] {
    return [...this.secrets].flatMap(([name, value]) => lines.filter((l) => l.includes(value)).map((l) => `${name} (${source}): ${l.slice(0, 300)}`));
  }
}
