# Filedock server image (docs/operations.md, "Docker"). From the repository root:
#   docker build -t filedock .
# Stage 1 builds the headless bundle exactly as a release does (npm run dist:server, docs/updates.md);
# stage 2 is that bundle on slim Debian, run as a non-root user. The bundle carries its own Node and
# native modules built in stage 1, so both stages are Debian 12 (same C library).

FROM node:20-bookworm AS bundle
WORKDIR /src
# The desktop shell's Electron binary is never part of the server bundle.
ENV ELECTRON_SKIP_BINARY_DOWNLOAD=1
COPY . .
RUN npm install --no-audit --no-fund \
 && npm run dist:server \
 && mkdir /bundle \
 && tar -xzf release/filedock-server-*.tar.gz -C /bundle --strip-components=1

FROM debian:bookworm-slim
# tini: PID 1 that forwards SIGTERM (the server drains) and reaps the tools the server starts.
# /data and /shared (where several instances mount one folder: SERVICE_STAGING_DIR) belong to the service user;
# an empty named volume takes that owner on first mount.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 filedock \
 && useradd --system --uid 10001 --gid filedock --home-dir /data --shell /usr/sbin/nologin filedock \
 && install -d -o filedock -g filedock -m 0750 /data \
 && install -d -o filedock -g filedock -m 0750 /shared
# Owned by root: the service cannot change its own code (a container is replaced, never self-updated).
COPY --from=bundle /bundle /opt/filedock
ENV SERVICE_DATA_DIR=/data \
    SERVICE_HOST=0.0.0.0 \
    SERVICE_PORT=5212 \
    SERVICE_INSTALL_MODE=docker
VOLUME ["/data"]
EXPOSE 5212
USER filedock
WORKDIR /data
# 200 while the server can serve; 503 (database_busy) while its database is away.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["/opt/filedock/node/bin/node", "-e", "fetch('http://127.0.0.1:'+(process.env.SERVICE_PORT||5212)+'/api/health').then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "/opt/filedock/bin/service"]
CMD ["serve"]
