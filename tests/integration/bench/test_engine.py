"""`rescind bench engine` at toy sizes: every table it writes is filled from real runs."""

from __future__ import annotations

import json

from typer.testing import CliRunner


def test_the_engine_benchmark_writes_each_size_with_its_raw_baseline(falkordb, tmp_path):
    """Every size has its load with the raw baseline beside it, its retractions, and the gate
    asked while justified writes run."""
    from rescind.cli.main import app

    res = CliRunner().invoke(app, ["bench", "engine", "--sizes", "1000,2000", "--samples", "3",
                                   "--batch", "500", "--gate-samples", "4", "--write-rate", "300",
                                   "--live-samples", "4",
                                   "--url", falkordb, "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "engine.json").read_text())
    assert data["command"].startswith("rescind bench engine")
    for size in ("1000", "2000"):
        load = data["load"][size]
        # The same generator feeds both loads, so both write the same number of rows.
        assert load["writes"] == load["raw_writes"] > int(size)
        assert load["writes_per_s"] > 0 and load["raw_writes_per_s"] > 0
        # RAM per memory, with the raw graph's of the same shape beside it.
        assert load["bytes_per_memory"] > 0 and load["raw_bytes_per_memory"] > 0
        # FalkorDB's own account is of the engine's graph: memories, and their STATUS edges.
        account = load["graph_memory_mb"]
        assert "Mem" in account["amortized_node_attributes_by_label_sz_mb"]
        assert "STATUS" in account["amortized_edge_attributes_by_type_sz_mb"]
        assert abs(load["ratio_to_raw"] - load["writes_per_s"] / load["raw_writes_per_s"]) < 0.01
        timed = data["retraction_region_100"][size]
        assert timed["runs"] == 3 and 90 <= timed["median_region"] <= 110
        gate = data["gate_decision"][size]  # the gate, asked while justified writes run
        assert gate["all_allowed_on_two_domains"] and gate["writes_per_s"] > 0
        assert all(gate[f"{kind}_{when}"]["runs"] == 4
                   for kind in ("new", "release") for when in ("live", "quiet"))
        live = data["retraction_under_live_writes"][size]  # retractions while writes run
        # The live writes rest on the same sources, so a region grows as they land.
        assert live["writes_per_s"] > 0 and 90 <= live["median_region"] <= 200
        assert all(live[f"{what}_{when}"]["runs"] == 2 for what in ("retraction", "raw_node",
                   "raw_edge") for when in ("live", "quiet"))
    assert "ratio_largest_to_smallest" in data["retraction_region_100"]
    md = (tmp_path / "engine.md").read_text()
    assert "| 2,000 |" in md and "raw UNWIND writes/s" in md and "raw bytes per memory" in md
    assert "| 2,000 | release |" in md
    assert "A retraction while justified writes run" in md
    assert "ratio_largest_to_smallest" in data["retraction_under_live_writes"]
