# The quotes service image. One image, three commands:
#   node service/server.ts            the HTTP service (default)
#   node indexer/cli.ts <file>        the indexer
#   node deploy/meili-keys.ts <dirs>  the compose deployment's key step
# TypeScript runs natively on Node 24 (type stripping): there is nothing to compile, so the first
# stage only installs the production dependencies and the second copies the sources beside them.
# No `# syntax=` line: it makes BuildKit pull a frontend image, and nothing here needs more than
# the builder's own, so the image builds without a registry once the base image is present.

ARG NODE_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only. The `node` devDependency (the Node 24 binary the repository pins
# for development) is not needed: this image's own Node is 24. No dependency needs an install script.
# Development tools are dropped from package.json first: the lock file may lack platform builds of
# dev tools (Biome) that some registries do not carry, and npm ci would refuse it for their sake.
RUN npm pkg delete devDependencies \
 && npm install --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY service ./service
COPY indexer ./indexer
COPY deploy ./deploy
COPY data ./data
# The code stays root-owned (read-only to the service). Writable by the service user: data/, where
# the sqlite backend builds SQLITE_PATH on first start, and the mount points of the compose key
# volumes: /run/meili-keys (one key, in the indexer or the service) and /run/meili-key-step/indexer
# and /search (both, in the key step). A new named volume takes its mount point's owner, mode and
# content, so each mount point is an empty directory: a volume first mounted in the service holds
# nothing but the key written into it.
RUN chown node:node /app/data \
 && mkdir -p /run/meili-keys /run/meili-key-step/indexer /run/meili-key-step/search \
 && chown -R node:node /run/meili-keys /run/meili-key-step \
 && chmod -R 700 /run/meili-keys /run/meili-key-step
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The service's V8 flags: why each, in loadtest/bench/processes.ts.
CMD ["node", "--max-semi-space-size=4", "--no-allocation-site-pretenuring", "service/server.ts"]
