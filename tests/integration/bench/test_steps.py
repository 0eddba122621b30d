"""The benchmark's account of where a retraction's time goes, read from the engine's spans.

Run in a process of its own: recording installs a tracer provider, which OpenTelemetry lets a
process set once, and the telemetry tests set theirs.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

SCRIPT = """
import json, sys
from rescind.bench import steps
from rescind.bench.engine import load
from rescind.bench.generator import Cluster
from rescind.engine import retraction as ret
from rescind.graph.store import TenantGraph, connect

class Quiet:
    def advance(self, *a, **k): pass
    def refresh(self): pass

graph = TenantGraph(connect(sys.argv[1]), sys.argv[2])
load(graph, [Cluster(f"s{i}", 300) for i in range(4)], 200, Quiet(), None)
with steps.recording() as took:
    for i in range(3):
        ret.run(graph, ret.Retract(f"r{i}", f"s{i}", reason="bench"))
ret.run(graph, ret.Retract("r3", "s3", reason="not recorded"))
dropped = len(steps._exporter.get_finished_spans())  # what the sampler let through meanwhile
with steps.recording() as nothing:
    pass
print(json.dumps({"took": took, "nothing": nothing, "outside": dropped,
                  "table": steps.table({"s": {"steps_ms": took}, "none": {"steps_ms": {}}})}))
"""


def test_the_steps_of_recorded_retractions_are_timed_and_no_others(falkordb, tenant_name):
    """Every step of a retraction has a median inside the whole's; a retraction run outside
    ``recording()`` records no span at all, and an empty recording gives no medians; the table
    has a row for each region that recorded steps, with what the steps leave of the whole."""
    out = subprocess.run([sys.executable, "-c", SCRIPT, falkordb, tenant_name],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout.strip().splitlines()[-1])
    took = report["took"]
    from rescind.bench.steps import STEPS

    assert set(took) == set(STEPS)
    whole = took.pop("rescind.retraction")
    assert all(0 < ms <= whole for ms in took.values()), (whole, took)
    assert report["outside"] == 0 and report["nothing"] == {}
    rows = [line for line in report["table"] if line.startswith("| s |")]
    assert len(rows) == 1 and not any(line.startswith("| none |") for line in report["table"])
    cells = rows[0].strip("| ").split(" | ")
    # rounded to 0.01 ms in the table, so equal to within the rounding
    assert float(cells[-1]) == pytest.approx(whole - sum(took[name] for name in STEPS[1:]),
                                             abs=0.011)
