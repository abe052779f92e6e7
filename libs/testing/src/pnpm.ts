/**
 * How to run pnpm from a test: under `pnpm test` npm_execpath is pnpm's own script, run here
 * with this process's Node; otherwise `pnpm` from PATH.
 */
export function pnpmCommand(args: string[]): { cmd: string; args: string[] } {
  const exec = process.env.npm_execpath;
  return exec && /pnpm/.test(exec) ? { cmd: process.execPath, args: [exec, ...args] } : { cmd: 'pnpm', args };
}
