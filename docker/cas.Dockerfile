# syntax=docker/dockerfile:1.7
# cas image: two commands (the chart passes them as `args`, so tini stays PID 1):
#   API     node apps/cas/dist/main.js      (default CMD)
#   migrate node apps/cas/dist/migrate.js   (Helm pre-install/pre-upgrade Job)
# Build from the repository root, in the docker format (podman/buildah's default OCI format drops
# HEALTHCHECK): docker build -f docker/cas.Dockerfile -t cas:<tag> .
#   podman build --format docker -f docker/cas.Dockerfile -t cas:<tag> .
# `pnpm images:check` builds and starts both images (docs/operations.md, "Images").
# Pin the base by digest in CI (NODE_IMAGE=node:24.21.0-bookworm-slim@sha256:...) for reproducible builds.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# Network: only the stages `deps` and `runtime-base` download (Debian's mirror, npm's registry);
# `build` and `runtime` need none (images:check builds them with --network=none).
# An extra CA for a TLS-intercepting proxy comes as the build secret `build_ca` (a file mounted for
# one RUN, never a layer; the build stages are not shipped): --secret id=build_ca,src=<file>.

# ---- deps: toolchain, every package of the lockfile, and the registry metadata `pnpm deploy` resolves against ----
FROM ${NODE_IMAGE} AS deps
# npm_config_nodedir: node-gyp uses the image's own headers instead of downloading them.
ENV CI=true PNPM_HOME=/pnpm PATH=/pnpm:$PATH npm_config_nodedir=/usr/local
# python3/g++/make: argon2's prebuilt binary crashes on this libc, its build script rebuilds it (~4 s).
RUN --mount=type=secret,id=build_ca,required=false \
    if [ -s /run/secrets/build_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build_ca; fi \
 && apt-get update \
 && apt-get install -y --no-install-recommends python3 g++ make \
 && rm -rf /var/lib/apt/lists/* \
 && npm install -g pnpm@10.34.9
WORKDIR /repo
# Lockfile first: this layer (the package download) survives source-only changes.
# --ignore-scripts: `pnpm fetch` links the packages and runs their install scripts; the `node`
# devDependency's would download a ~120 MB Node binary that the image never uses (its Node is the base's).
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json .npmrc ./
# The patches pnpm-workspace.yaml names (patchedDependencies): the lockfile holds their hashes.
COPY patches/ patches/
RUN --mount=type=secret,id=build_ca,required=false \
    if [ -s /run/secrets/build_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build_ca; fi \
 && pnpm fetch --ignore-scripts
# `pnpm deploy --legacy` resolves the lockfile's versions against pnpm's metadata cache, which
# `pnpm fetch` does not fill: one resolution of the workspace's manifests does (no package download;
# against an empty store, else pnpm takes the versions it holds without their metadata).
COPY apps/collect-api/package.json apps/collect-api/
COPY apps/cas/package.json apps/cas/
COPY libs/contracts/package.json libs/contracts/
COPY libs/embedded/package.json libs/embedded/
COPY libs/jwt-validation/package.json libs/jwt-validation/
COPY libs/platform/package.json libs/platform/
COPY libs/runtime/package.json libs/runtime/
COPY libs/testing/package.json libs/testing/
COPY libs/xlsform/package.json libs/xlsform/
RUN --mount=type=secret,id=build_ca,required=false \
    if [ -s /run/secrets/build_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/build_ca; fi \
 && pnpm install --resolution-only --no-frozen-lockfile --ignore-scripts --store-dir=/tmp/empty-store \
 && rm -rf /tmp/empty-store /repo/node_modules /repo/*/*/node_modules

# ---- build (no network): whole workspace, dev dependencies, tsc, then `pnpm deploy` of this one service ----
FROM deps AS build
COPY . .
# --ignore-scripts: as for `pnpm fetch`; the deploy below builds argon2 (allowed in pnpm-workspace.yaml).
RUN pnpm install --offline --frozen-lockfile --ignore-scripts \
 && pnpm build \
 && pnpm --filter cas deploy --prod --legacy --offline /out/apps/cas \
 && rm -rf /out/apps/cas/src /out/apps/cas/test /out/apps/cas/tsconfig.json

# ---- runtime-base: the base plus tini (network: Debian's mirror) ----
FROM ${NODE_IMAGE} AS runtime-base
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*

# ---- runtime (no network): production dependencies + dist only, non-root, read-only-root compatible ----
FROM runtime-base AS runtime
# V8's young generation: at most 2 x 4 MB instead of the up to 2 x 64 MB V8 picks on a large
# host (docs/benchmarks.md, "idle-rss"); --expose-gc lets the service give back what start-up
# took once it is built (releaseStartUpMemory, libs/platform; docs/operations.md, "Images").
# The benches start the services with the same options.
ENV NODE_OPTIONS="--expose-gc --max-semi-space-size=4"
ENV NODE_ENV=production \
    CAS_PORT=4000
WORKDIR /srv
COPY --from=build --chown=0:0 /out/ /srv/
# Numeric uid (the image's `node` user) so Kubernetes runAsNonRoot can verify it without /etc/passwd.
USER 1000:1000
EXPOSE 4000
# Only /tmp is written at run time; mount it as a volume with readOnlyRootFilesystem.
VOLUME ["/tmp"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.CAS_PORT||4000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "apps/cas/dist/main.js"]
