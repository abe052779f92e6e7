import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSystemPackages, findExecutable, installCommand, type SystemPackage } from './system-packages.js';

/**
 * apt-get is the one part outside the platform here: a stand-in script on PATH records how it
 * was called and, on `install`, creates what the packages provide (or fails when told to).
 */
describe('ensureSystemPackages', () => {
  let dir: string;
  let fakeBin: string;
  let calls: string;
  let env: NodeJS.ProcessEnv;
  let redis: SystemPackage;
  let browser: SystemPackage;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sys-pkgs-'));
    fakeBin = join(dir, 'bin');
    mkdirSync(fakeBin);
    mkdirSync(join(dir, 'usr-bin'));
    calls = join(dir, 'calls.log');
    // Names no machine has, so what is installed for real never answers for them.
    redis = { debian: 'collect-test-redis', provides: 'collect-test-redis-server' };
    browser = { debian: 'collect-test-chromium', provides: join(dir, 'usr-bin', 'chromium') };
    writeFileSync(
      join(fakeBin, 'apt-get'),
      [
        '#!/bin/sh',
        `echo "DEBIAN_FRONTEND=$DEBIAN_FRONTEND $*" >> "${calls}"`,
        '[ -n "$FAKE_APT_FAIL" ] && exit 100',
        'case " $* " in *" install "*)',
        `  [ -n "$FAKE_APT_CREATES_NOTHING" ] || { touch "${join(fakeBin, redis.provides)}" "${browser.provides}"; chmod +x "${join(fakeBin, redis.provides)}" "${browser.provides}"; } ;;`,
        'esac',
        'exit 0',
      ].join('\n'),
    );
    chmodSync(join(fakeBin, 'apt-get'), 0o755);
    env = { ...process.env, PATH: `${fakeBin}:${process.env.PATH}` };
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const recorded = () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : []);

  it('as root: runs apt-get update, then installs exactly the missing packages without recommends, non-interactively', () => {
    const logs: string[] = [];
    ensureSystemPackages([redis, browser, { debian: 'already-there', provides: 'sh' }], { env, root: true, log: (l) => logs.push(l) });
    expect(recorded()).toEqual([
      'DEBIAN_FRONTEND=noninteractive -o DPkg::Lock::Timeout=300 update',
      'DEBIAN_FRONTEND=noninteractive -o DPkg::Lock::Timeout=300 install -y --no-install-recommends collect-test-redis collect-test-chromium',
    ]);
    expect(logs.join('\n')).toContain('installing collect-test-redis collect-test-chromium with apt-get');
    expect(findExecutable(redis.provides, env)).toBe(join(fakeBin, redis.provides));
    expect(findExecutable(browser.provides, env)).toBe(browser.provides);
  });

  it('as root with nothing missing: leaves apt-get alone', () => {
    ensureSystemPackages([{ debian: 'dash', provides: 'sh' }, { debian: 'coreutils', provides: '/bin/ls' }], { env, root: true });
    expect(recorded()).toEqual([]);
  });

  it('not root: stops with the exact command to run and never calls apt-get', () => {
    expect(() => ensureSystemPackages([redis, browser], { env, root: false })).toThrow(
      'collect-test-redis-server (Debian package collect-test-redis), ' +
        `${browser.provides} (Debian package collect-test-chromium) not installed. Install with:\n` +
        '  sudo apt-get update && sudo apt-get install -y --no-install-recommends collect-test-redis collect-test-chromium',
    );
    expect(recorded()).toEqual([]);
    expect(installCommand([redis])).toBe('sudo apt-get update && sudo apt-get install -y --no-install-recommends collect-test-redis');
  });

  it('as root: a failing apt-get stops with its arguments and the command to run by hand', () => {
    expect(() => ensureSystemPackages([redis], { env: { ...env, FAKE_APT_FAIL: '1' }, root: true })).toThrow(
      /apt-get -o DPkg::Lock::Timeout=300 update failed \(exit 100\); install collect-test-redis by hand: sudo apt-get update && sudo apt-get install -y --no-install-recommends collect-test-redis/,
    );
    expect(recorded()).toHaveLength(1);
  });

  it('as root: an install that does not bring the program is an error, not a silent success', () => {
    expect(() => ensureSystemPackages([redis], { env: { ...env, FAKE_APT_CREATES_NOTHING: '1' }, root: true })).toThrow(
      'apt-get installed collect-test-redis but collect-test-redis-server is still missing',
    );
  });
});
