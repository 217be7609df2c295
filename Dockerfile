# The idsql ID server (and the rest of the idsql command) as a container
# image: a static binary on Alpine, run as an unprivileged user, with a
# health check on /healthz.
#
#   docker build -t idsql .
#   docker run --rm -p 8080:8080 idsql            # embedded default: SQLite in /var/lib/idsql
#   docker run --rm -p 8080:8080 -v $PWD/idsql.yaml:/etc/idsql/idsql.yaml:ro idsql \
#       serve --addr 0.0.0.0:8080 --dsn 'postgres://...' --migrate
#   docker run --rm idsql version
#
# docker-compose.yml has an idsql service built from this file.
#
# The image itself is not built in CI (there is no Docker engine there).
# Instead cmd/idsql's TestDockerfileBuild runs this file's build command
# (the `go build` line and ENV of the build stage below) and checks that
# the binary is static and works; keep the build stage in that shape.

ARG GO_VERSION=1.26
ARG ALPINE_VERSION=3.22

FROM golang:${GO_VERSION}-alpine AS build
# git lets the go command stamp the commit into the binary (idsql version).
RUN apk add --no-cache git
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=0
RUN go build -trimpath -buildvcs=auto -ldflags="-s -w" -o /out/idsql ./cmd/idsql

FROM alpine:${ALPINE_VERSION}
RUN addgroup -S -g 10001 idsql \
	&& adduser -S -D -H -u 10001 -G idsql -h /var/lib/idsql idsql \
	&& mkdir -p /var/lib/idsql /etc/idsql \
	&& chown idsql:idsql /var/lib/idsql
COPY --from=build /out/idsql /usr/local/bin/idsql
USER 10001:10001
# A configuration mounted as /etc/idsql/idsql.yaml is read without
# --config (serve looks for ./idsql.yaml); without one serve runs the
# embedded default with its data in /var/lib/idsql.
WORKDIR /etc/idsql
VOLUME /var/lib/idsql
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
	CMD wget -q -O /dev/null http://127.0.0.1:8080/healthz || exit 1
ENTRYPOINT ["idsql"]
CMD ["serve", "--addr", "0.0.0.0:8080", "--data", "/var/lib/idsql"]
