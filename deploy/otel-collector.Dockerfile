# The OpenTelemetry collector's image with one static binary added, so that compose can run a
# health check inside it: the upstream image has no shell and no HTTP client. busybox's wget
# asks the collector's health_check extension (:13133). Built by docker-compose.yml.
FROM busybox:1.37.0-musl AS tools

FROM otel/opentelemetry-collector-contrib:0.160.0
COPY --from=tools /bin/busybox /bin/busybox
