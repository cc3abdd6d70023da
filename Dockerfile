# ledgerbot daemon image (docs/operations.md, "Docker").
#
#   docker build -t ledgerbot .
#   docker run -d --name ledgerbot \
#     -v "$PWD/bot.config.yaml:/etc/ledgerbot/bot.config.yaml:ro" \
#     -v "$PWD/rules:/etc/ledgerbot/rules:ro" \
#     -v ledgerbot-state:/var/lib/ledgerbot \
#     -p 127.0.0.1:9464:9464 ledgerbot
#
# CI builds it with buildah and runs it (the bot against a sandbox, this HEALTHCHECK, the user, the
# state volume, no dev dependencies or tests in the image): scripts/ci/image-check.sh.
#
# The config must say `state: { dir: /var/lib/ledgerbot }` and `http: { host: 0.0.0.0, port: 9464 }`
# (a port published to other hosts wants `http.token`). The node base image has no curl: the
# health check is a few lines of node.

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: all dependencies, compile TypeScript, then drop the dev dependencies ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary matches.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
# The dependencies are installed in a layer that depends on the lock file alone, so editing
# package.json (scripts, metadata) does not recompile the native module: npm ci runs against a
# package.json written from the lock file's own copy of the root package (the dependencies it
# was locked for); the real one is copied next, before the build.
COPY package-lock.json ./
# Scripts off: our own `prepare` (the build) needs the sources, which come later; the one native
# dependency is then built on its own (JOBS=max: node-gyp compiles on every core), and its
# compiler leftovers (object files, the static SQLite library, the SQLite sources, about 25 MB)
# are deleted: only build/Release/better_sqlite3.node is loaded.
RUN node -e "const fs=require('fs');fs.writeFileSync('package.json',JSON.stringify(JSON.parse(fs.readFileSync('package-lock.json','utf8')).packages['']))" \
  && npm ci --no-audit --no-fund --ignore-scripts \
  && JOBS=max npm rebuild better-sqlite3 \
  && cd node_modules/better-sqlite3 \
  && rm -rf deps src build/Release/obj build/Release/obj.target build/Release/.deps \
    build/Release/sqlite3.a build/Release/test_extension.node
COPY package.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/bundle-run.mjs ./scripts/
# `build:dist` compiles only: the console's page is already built into src/ (its committed
# console-assets.ts), and its sources (console/, the other scripts/) are not in the build
# context. Then, as `npm run build` does, the bundle `run` starts from (dist/run/).
RUN npm run build:dist && node scripts/bundle-run.mjs && npm prune --omit=dev --no-audit --no-fund

# ---- run: production dependencies and the compiled code only, as a non-root user ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    LEDGERBOT_HTTP_PORT=9464
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY schema ./schema
COPY rules ./rules
COPY examples ./examples
# The config (/etc/ledgerbot/bot.config.yaml) and the rules (/etc/ledgerbot/rules) are mounted
# read-only; the state directory is a volume owned by the user the bot runs as (the image's
# `node`, uid 1000), so a named volume created by Docker is writable by it.
RUN mkdir -p /etc/ledgerbot/rules /var/lib/ledgerbot && chown node:node /var/lib/ledgerbot
VOLUME ["/etc/ledgerbot", "/etc/ledgerbot/rules", "/var/lib/ledgerbot"]
USER node
EXPOSE 9464
# /livez answers 200 while the bot is healthy. LEDGERBOT_HTTP_PORT must match http.port.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const r=require('http').get('http://127.0.0.1:'+(process.env.LEDGERBOT_HTTP_PORT||9464)+'/livez',s=>process.exit(s.statusCode===200?0:1));r.on('error',()=>process.exit(1));r.setTimeout(4000,()=>process.exit(1))"]
# SIGTERM (docker stop) drains: intake stops, submissions out are awaited, the checkpoint saved.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/ledgerbot.js"]
CMD ["run", "--config", "/etc/ledgerbot/bot.config.yaml"]
