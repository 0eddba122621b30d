"""`rescind bench cluster` at a toy size: every topology is measured, the capacity table follows
from the figures measured and read."""

from __future__ import annotations

import json

from typer.testing import CliRunner


def test_the_cluster_benchmark_measures_each_topology_and_derives_the_capacity(tmp_path):
    from rescind.cli.main import app

    engine = tmp_path / "engine.json"
    engine.write_text(json.dumps({"command": "rescind bench engine --sizes 1000000",
                                  "load": {"1000000": {"bytes_per_memory": 1000,
                                                       "raw_bytes_per_memory": 800}}}))
    res = CliRunner().invoke(app, ["bench", "cluster", "--events", "200", "--repeats", "1",
                                   "--engine-results", str(engine), "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "cluster.json").read_text())
    assert data["command"].startswith("rescind bench cluster")
    assert set(data["ingest"]) == {"single server", "3 masters",
                                   "3 masters + 3 replicas, acknowledged after WAIT",
                                   "3 masters + 3 replicas, no WAIT"}
    assert all(v["writes_per_s"] > 0 and len(v["runs"]) == 1 for v in data["ingest"].values())
    tenant = data["tenant"]
    assert tenant["graph_made"] and tenant["bytes_per_tenant"] > 1_000  # indexes, constraints
    first = data["capacity"][0]
    per_tenant = tenant["bytes_per_tenant"] + 1_000_000 * 1000
    assert first["tenants_per_master"] == int(64 * 1024 ** 3 * 0.5 // per_tenant)
    assert first["masters"] == -(-10_000 // first["tenants_per_master"])
    assert "| 3 masters + 3 replicas, acknowledged after WAIT |" in \
        (tmp_path / "cluster.md").read_text()


def test_the_cluster_benchmark_needs_the_engines_results(tmp_path):
    from rescind.cli.main import app

    res = CliRunner().invoke(app, ["bench", "cluster", "--engine-results",
                                   str(tmp_path / "none.json"), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "run `rescind bench engine` first" in res.output
