/** What a mocked dependency recorded: every call of every method given, in order. */
export interface MockRecord {
  calls: Array<{ method: string; args: unknown[] }>;
  /** The argument lists of one method's calls. */
  callsOf(method: string): unknown[][];
}

/**
 * A stand-in for a repository (or any injected class) in a service test: the methods a test
 * gives answer as given and are recorded; any other method the service calls throws, naming
 * it, so a test states every query the rule under test may make. Not a thenable (an awaited
 * mock stays the mock).
 */
export function mockOf<T extends object>(methods: { [K in keyof T]?: T[K] extends (...args: infer A) => infer R ? (...args: A) => R : never } = {}): T & { mock: MockRecord } {
  const record: MockRecord = {
    calls: [],
    callsOf: (method) => record.calls.filter((c) => c.method === method).map((c) => c.args),
  };
  const given = methods as Record<string, ((...args: unknown[]) => unknown) | undefined>;
  return new Proxy({} as T & { mock: MockRecord }, {
    get(_target, prop) {
      if (prop === 'mock') return record;
      if (prop === 'then' || typeof prop === 'symbol') return undefined;
      const impl = given[prop];
      return (...args: unknown[]) => {
        record.calls.push({ method: prop, args });
        if (!impl) throw new Error(`unexpected call: ${prop}()`);
        return impl(...args);
      };
    },
  });
}
