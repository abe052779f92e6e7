# syntax=docker/dockerfile:1.7
# collect-api image: one image, three commands (the chart passes them as `args`, so tini stays PID 1):
#   API     node apps/collect-api/dist/main.js      (default CMD)
#   worker  node apps/collect-api/dist/worker.js    (queue consumer; see docs/operations.md)
#   migrate node apps/collect-api/dist/migrate.js   (Helm pre-install/pre-upgrade Job)
# Build from the repository root: docker build -f docker/collect-api.Dockerfile -t collect-api:<tag> .
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
 && pnpm --filter collect-api deploy --prod --legacy /out/apps/collect-api \
 && rm -rf /out/apps/collect-api/src /out/apps/collect-api/test /out/apps/collect-api/tsconfig.json

# ---- runtime: production dependencies + dist only, non-root, read-only-root compatible ----
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /data/media \
 && chown -R 1000:1000 /data
# V8's young generation: at most 2 x 8 MB. V8 grows it while start-up allocates and keeps it while
# idle, so the service gives it back once built (releaseStartUpMemory, libs/platform: one
# memory-reducing gc(), hence --expose-gc) and it grows again only under load, up to the cap: a
# long export or download grows it to the cap, so the cap is part of their RSS growth (2 x 16 MB
# took exports past their 64 MB budget); fewer scavenges under intake than 2 x 4 MB
# (docs/operations.md, "Images");
# the benches start the services with the same options.
# Old generation capped at 384 MB (the live heap is about 70 MB; the pods' limit is 768Mi): on a
# large host V8 sizes the old generation for a 4 GB heap and lets promoted garbage grow to about
# 4 x the live heap before collecting it, +100 to +240 MB of RSS during a 100,000-row export; with
# the cap it grows by a smaller factor (docs/exports.md, "Streaming and memory").
ENV NODE_OPTIONS="--expose-gc --max-semi-space-size=8 --max-old-space-size=384"
# glibc's malloc gives each thread that allocates (libuv's pool: zlib, fs) an arena of its own;
# two arenas: about 20 MB less idle RSS and no arena growth from an export's deflate work.
ENV MALLOC_ARENA_MAX=2
ENV NODE_ENV=production \
    COLLECT_PORT=3000 \
    MEDIA_ROOT=/data/media
WORKDIR /srv
COPY --from=build --chown=0:0 /out/ /srv/
# Numeric uid (the image's `node` user) so Kubernetes runAsNonRoot can verify it without /etc/passwd.
USER 1000:1000
EXPOSE 3000
# Only /tmp and /data are written at run time; mount them as volumes with readOnlyRootFilesystem.
VOLUME ["/tmp", "/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.COLLECT_PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "apps/collect-api/dist/main.js"]
