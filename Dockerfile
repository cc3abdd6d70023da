# ledgerbot daemon image. Build: docker build -t ledgerbot .
FROM node:20-bookworm-slim AS build
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
RUN npm ci --no-audit --no-fund && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json bot.config.yaml ./
COPY bin ./bin
COPY rules ./rules
COPY examples ./examples
USER node
ENTRYPOINT ["node", "bin/ledgerbot.js"]
CMD ["--help"]
