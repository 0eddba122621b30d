"""A `rescind worker` process exports its telemetry over OTLP/HTTP."""

from __future__ import annotations

import http.server

import pytest


class _Collector(http.server.BaseHTTPRequestHandler):
    received: list[tuple[str, bytes]] = []

    def do_POST(self):  # noqa: N802 - the http.server API
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        _Collector.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def lone_server():
    """A server of its own: the session's has in-process writers that would take the entries."""
    from rescind.runtime.server import EmbeddedFalkorDB

    with EmbeddedFalkorDB() as server:
        yield server.url


def test_a_worker_process_exports_spans_and_metrics_over_otlp(lone_server, tenant_name):
    """RESCIND_OTEL=otlp: a `rescind worker` sends its spans and metrics (events applied,
    consumer lag) to the collector at RESCIND_OTLP_ENDPOINT (a loopback stand-in here)."""
    falkordb = lone_server
    import os
    import signal
    import subprocess
    import sys
    import threading
    import time

    import redis

    from rescind.contract import events as ev
    from rescind.contract import layout
    from rescind.middleware.publisher import Publisher

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {**os.environ, "RESCIND_OTEL": "otlp", "RESCIND_METRIC_INTERVAL_MS": "300",
           "RESCIND_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}"}
    proc = subprocess.Popen([sys.executable, "-m", "rescind.cli", "worker", "writer", "--url",
                             falkordb, "--id", f"otlp-{tenant_name}"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        from rescind.graph import tenants
        from rescind.graph.store import connect

        tenants.create(connect(falkordb), tenant_name, by="tests")  # on this server of its own
        pub = Publisher(falkordb)
        pub.publish(ev.ObservationRecorded(event_id=f"{tenant_name}-o", tenant=tenant_name,
                                           at=ev.from_micros(1), source="portal:x",
                                           source_kind="portal", text="x says 1"))
        pub.close()
        conn = redis.Redis.from_url(falkordb)
        from rescind.scenario.via_streams import wait_idle

        wait_idle(conn, layout.tenant_stream(tenant_name), only=(layout.WRITER_GROUP,))
        deadline = time.monotonic() + 30  # at least one metric export interval
        while not any(p == "/v1/metrics" for p, _ in list(_Collector.received)):
            assert time.monotonic() < deadline, "no metrics exported in 30 s"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        server.shutdown()
    assert proc.returncode == 0, err.decode()[-2000:]
    paths = {p for p, _ in _Collector.received}
    assert {"/v1/traces", "/v1/metrics"} <= paths, paths
    traces = b"".join(b for p, b in _Collector.received if p == "/v1/traces")
    sent = b"".join(b for p, b in _Collector.received if p == "/v1/metrics")
    assert b"rescind" in traces  # the service name, in the protobuf resource
    assert b"rescind.events.applied" in sent and b"rescind.consumer.lag" in sent
