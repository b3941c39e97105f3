# syntax=docker/dockerfile:1
# The vehicle-lookup service as an image (docs/operating.md "Container"). Two stages: the build
# stage has the compilers (better-sqlite3 is a native module) and TypeScript; the run stage has
# Node, the compiled service and its production dependencies only.

FROM node:20-bookworm-slim AS build
# A C++ toolchain for better-sqlite3, used when no prebuilt binary for this Node can be fetched.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Dependencies first: this layer is rebuilt only when the lock file changes.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY scripts/build.js ./scripts/build.js
COPY src ./src
# Compile to dist/, then drop the development dependencies (TypeScript, tsx, the test tools) and
# better-sqlite3's build leftovers (the SQLite sources and object files, 25 MB): only its compiled
# module is loaded.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && cd node_modules/better-sqlite3 \
 && mv build/Release/better_sqlite3.node /tmp/ \
 && rm -rf build deps src \
 && mkdir -p build/Release \
 && mv /tmp/better_sqlite3.node build/Release/

FROM node:20-bookworm-slim AS run
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY samples ./samples
# `vehicle-lookup <command>` (the CLI) on the PATH, for `docker compose exec`. DATA_DIR belongs to
# the unprivileged `node` user of the base image, which the service runs as; the offline VIN
# database is unpacked there at first start (a volume), not into a layer of the image.
RUN ln -s /app/bin/vehicle-lookup.js /usr/local/bin/vehicle-lookup \
 && mkdir -p /data \
 && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080
# /healthz answers while the process serves; /readyz (the store) is for load balancers.
HEALTHCHECK --interval=10s --timeout=3s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node itself is PID 1 (no npm in between), so SIGTERM reaches the service, which stops taking
# requests, finishes those in flight and exits (src/main.ts).
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
