# syntax=docker/dockerfile:1
# Multi-stage: production dependencies only, non-root user, data in a volume.
# (Docker is not available on the development machines: this file is written carefully but untested here.)

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# No install scripts are needed: the sentence-encoder weights and esbuild's binary ship in packages.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY bin ./bin
COPY src ./src
# The CLI (push, import-mcp, discover) runs the TypeScript SDK from its source.
COPY clients/typescript/src ./clients/typescript/src
COPY migrations ./migrations
COPY openapi ./openapi
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
VOLUME ["/data"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
# SIGTERM drains in-flight requests before exit (see src/server.ts).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/tool-registry.js"]
CMD ["serve"]
