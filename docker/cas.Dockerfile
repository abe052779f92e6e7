# syntax=docker/dockerfile:1.7
# cas image: two commands (the chart passes them as `args`, so tini stays PID 1):
#   API     node apps/cas/dist/main.js      (default CMD)
#   migrate node apps/cas/dist/migrate.js   (Helm pre-install/pre-upgrade Job)
# Build from the repository root: docker build -f docker/cas.Dockerfile -t cas:<tag> .
# Pin the base by digest in CI (NODE_IMAGE=node:24.21.0-bookworm-slim@sha256:...) for reproducible builds.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# ---- build: whole workspace, dev dependencies, tsc, then `pnpm deploy` of this one service ----
FROM ${NODE_IMAGE} AS build
# npm_config_nodedir: node-gyp uses the image's own headers instead of downloading them.
ENV CI=true PNPM_HOME=/pnpm PATH=/pnpm:$PATH npm_config_nodedir=/usr/local
# python3/g++/make: argon2's prebuilt binary crashes on this libc, its build script rebuilds it (~4 s).
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 g++ make \
 && rm -rf /var/lib/apt/lists/* \
 && npm install -g pnpm@10.34.9
WORKDIR /repo
# Lockfile first: this layer (the package download) survives source-only changes.
# (`pnpm install` below also lets the `node` devDependency fetch its Node 24 binary with npm: the
# scripts' runtime outside images; the image's own Node is the base's.)
COPY pnpm-lock.yaml pnpm-workspace.yaml package.json ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile \
 && pnpm build \
 && pnpm --filter cas deploy --prod --legacy /out/apps/cas \
 && rm -rf /out/apps/cas/src /out/apps/cas/test /out/apps/cas/tsconfig.json

# ---- runtime: production dependencies + dist only, non-root, read-only-root compatible ----
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
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
