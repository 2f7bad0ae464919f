# The service image. Build: docker build -t netauto-api . (compose.yaml does it for you).
# test/ops/production-install.test.ts runs the same steps without Docker.

# Build stage: every dependency, TypeScript compiled to dist/ (migrations copied beside it).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

# Runtime stage: the same Node major, production dependencies only, no compiler, no tests.
FROM node:24-bookworm-slim
# MALLOC_MMAP_THRESHOLD_: glibc's, as `npm start` sets it (docs/deploying.md, "Memory").
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    MALLOC_MMAP_THRESHOLD_=4194304
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The data directory (embedded database, Git clones) belongs to the unprivileged user; this must
# happen before VOLUME, which keeps what the directory holds at that point.
RUN mkdir -p /data && chown node:node /data
VOLUME ["/data"]
# "node" (uid 1000) comes with the base image; the application files stay root-owned, read-only to it.
USER node
EXPOSE 3000
# Liveness over HTTP with node itself: the slim image has no curl.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself, then closes gracefully (server.ts).
CMD ["node", "dist/server.js"]
