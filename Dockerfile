# The service as a container image, after Deno's documented practice: the official image, the
# dependencies cached in their own layer (rebuilt only when deno.json or deno.lock change), and
# the process run as the image's unprivileged `deno` user.
#
#   docker build -t link-feed .
#   docker run -p 8000:8000 -e DATABASE_URL=postgres://… -e ADMIN_TOKEN=… link-feed
#
# With podman, `podman build --format docker -t link-feed .`: the OCI format has no HEALTHCHECK.
# compose.yaml runs it beside PostgreSQL and Caddy (HTTPS). Without DATABASE_URL the embedded
# database keeps its files in the /data volume.
FROM denoland/deno:2.9.6

WORKDIR /app
ENV DENO_NO_UPDATE_CHECK=1 \
    PORT=8000 \
    DATA_DIR=/data

# Dependencies first: this layer is reused until the import map or the lock file change.
COPY deno.json deno.lock ./
RUN deno install

# The source, then every module the entry point can reach (GraphiQL and Redoc included).
COPY . .
RUN deno cache main.ts cli/admin.ts cli/feed.ts \
    && chown -R deno:deno "${DENO_DIR:-/deno-dir}" \
    && mkdir -p /data && chown deno:deno /data

USER deno
VOLUME ["/data"]
EXPOSE 8000

# /readyz answers 200 once the database answers. The image has no curl: Deno itself asks.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["deno", "eval", "const r = await fetch(`http://127.0.0.1:${Deno.env.get('PORT') ?? 8000}/readyz`).catch(() => null); Deno.exit(r?.ok ? 0 : 1);"]

# The image's entry point runs `deno` with these arguments: `deno task start`, as in the README,
# with the task's permissions only: network, environment, read, write (docs/operations.md,
# "Permissions"). For HTTPS webhook receivers behind a private CA, mount the CA's certificate and
# name it in DENO_CERT: `docker run -v ./ca.pem:/ca.pem:ro -e DENO_CERT=/ca.pem …`.
CMD ["task", "start"]
