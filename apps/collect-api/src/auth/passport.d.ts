// Minimal typing of passport 0.7 for the AuthGuard (no @types/passport dependency).
declare module 'passport' {
  interface Strategy {
    name?: string;
    authenticate(this: unknown, req: unknown, options?: unknown): unknown;
  }
  class Passport {
    use(name: string, strategy: Strategy): this;
    authenticate(
      name: string,
      options: { session: boolean },
      callback: (err: unknown, user: unknown, info?: unknown, status?: number) => void,
    ): (req: unknown, res: unknown, next: (err?: unknown) => void) => void;
  }
  const passport: Passport & { Passport: typeof Passport };
  export default passport;
}
