"""docs/operating.md's day with curl, run as written against a real `rescind up` on the data a
demo left; and `rescind demo` refusing to reset a tenant that the running `up` serves."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from rescind.graph.store import TenantGraph, connect
from rescind.runtime.readiness import running_url
from rescind.runtime.server import free_port
from tests.support.paths import ROOT

pytestmark = pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")),
                                reason="the documented commands use curl and jq")
BIN = Path(sys.executable).parent
SECTION = "## A day with curl"


def _rescind(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    res = subprocess.run([str(BIN / "rescind"), *args], capture_output=True, text=True, cwd=cwd,
                         timeout=300, env={**os.environ, "COLUMNS": "200"})
    if check:
        assert res.returncode == 0, res.stderr
    return res


def documented_blocks() -> list[str]:
    """The bash blocks of the section, in order."""
    text = (ROOT / "docs" / "operating.md").read_text(encoding="utf-8")
    start = text.index(SECTION)
    section = text[start:text.index("\n## ", start + 1)]
    return re.findall(r"```bash\n(.*?)```", section, flags=re.S)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`make demo`'s week on a data directory, then `rescind up` serving it with an admin
    token; yields (workdir, api port)."""
    work = tmp_path_factory.mktemp("curl-day")
    _rescind("demo", cwd=work)  # the default data directory, as `make demo` uses
    api_port = free_port()
    up = subprocess.Popen([str(BIN / "rescind"), "up", "--api-port", str(api_port)], cwd=work,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env={**os.environ, "RESCIND_ADMIN_TOKEN": "a" * 64})
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{api_port}/api/health",
                                            timeout=5) as r:
                    if json.load(r)["ok"]:
                        break
            except OSError:
                pass
            assert up.poll() is None, up.stdout.read()
            assert time.monotonic() < deadline, "rescind up did not come up"
            time.sleep(0.2)
        yield work, api_port
    finally:
        up.terminate()
        up.wait(60)


def test_the_documented_curl_day_works_as_written(served):
    """The blocks run unchanged but for the venv's path and the port: each answer is what the
    section says it is."""
    work, api_port = served
    blocks = documented_blocks()
    assert len(blocks) == 8 and "rescind up" in blocks[0]
    script = "\n".join(blocks[1:]).replace(".venv/bin/rescind", str(BIN / "rescind")) \
        .replace("127.0.0.1:8765", f"127.0.0.1:{api_port}")
    res = subprocess.run(["bash", "-euo", "pipefail", "-c", script], capture_output=True,
                         text=True, cwd=work, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    jsons = [json.loads(x) for x in lines if x.startswith("{")]
    sources = {d["id"]: d["domain"] for d in jsons if set(d) == {"id", "domain"}}
    assert sources["portal:acme"] == "portal:acme"
    assert sources["contract:acme"] == "signed-contracts"
    [preview] = [d for d in jsons if "kept" in d]
    assert preview["counts"]["observations"] == 1 and sum(preview["counts"].values()) == 1
    assert any("ZZ45 ACMP" in t and t.startswith("pay_invoice") for t in preview["kept"])
    [commit] = [d for d in jsons if d.get("committed") is True]
    assert commit["retraction"] == "r-acme-portal"
    [frag] = [d for d in jsons if "fragility" in d]
    assert frag == {"status": "IN", "fragility": 1, "would_fake_it": ["signed-contracts"]}
    states = {d["id"]: d["state"] for d in jsons if set(d) == {"id", "source", "state"}}
    assert states == {"r-northwind-portal": "committed", "r-acme-portal": "committed"}
    [back] = [d for d in jsons if d.get("direction") == "IN"]
    assert back["retraction"] == "r-acme-portal~reinstated"
    assert {"who": "sam@harborfinch.example", "action": "retraction.reinstate",
            "target": "r-acme-portal", "result": "ok"} in jsons
    assert {"name": "payment:INV-1001", "amount": 6000, "payee_name": "Northwind Supplies",
            "bank_reference": "PAY-0001", "state": "drafted"} in jsons
    assert "RECALL REQUEST - DRAFT: not sent until finance approves" in lines
    notice = "NOTICE: we have moved to a new bank. Please update your records before paying."
    assert any(line.strip() == notice for line in lines)  # the evidence, whole
    assert {"by": "fran@harborfinch.example",
            "text": "Called Northwind AR: they never changed banks"} in jsons
    assert {"name": "payment:INV-1001", "state": "approved"} in jsons
    assert "<OrgnlTxId>PAY-0001</OrgnlTxId>" in lines
    assert (work / "recall.csv").read_text().splitlines()[1].startswith("payment:INV-1001,")
    assert {"state": "exported", "exports": ["camt.056", "csv"]} in jsons
    [refused] = [d for d in jsons if "detail" in d]
    assert "cannot be rejected now" in refused["detail"]
    assert {"name": "payment:INV-1002", "amount": 34500, "held": True} in jsons
    [warning] = [line for line in lines if line.startswith("payment:INV-1001 is IN again")]
    assert "pull recall:act-" in warning and "exported as csv" in warning

def test_the_demo_refuses_to_reset_a_tenant_that_up_serves(served):
    """`rescind demo` on the data `up` serves: an existing tenant is refused (exit 2) and left
    as it was; a new tenant beside it plays, and its next steps do not offer a second `up`."""
    work, _ = served
    url = running_url(work / ".rescind" / "data")
    graph = TenantGraph(connect(url), "demo")
    query = "MATCH (m:Mem) RETURN m.id, m.status ORDER BY m.id"
    before = graph.rows(query), graph.rows("MATCH (r:Retraction) RETURN r.id, r.state")
    res = _rescind("demo", cwd=work, check=False)
    assert res.returncode == 2
    assert "tenant 'demo' already exists" in res.stderr and "--tenant demo-2" in res.stderr
    assert (graph.rows(query), graph.rows("MATCH (r:Retraction) RETURN r.id, r.state")) == before
    res = _rescind("demo", "--tenant", "demo-2", "--json", cwd=work)
    done = json.loads(res.stdout)
    assert done["tenant"] == "demo-2" and done["held"] == ["payment:INV-1002"]
    commands = [n["command"] for n in done["next"]]
    assert all("--tenant demo-2" in c for c in commands)
    assert not any(c.endswith(" up") or " up " in c for c in commands)
    assert (graph.rows(query), graph.rows("MATCH (r:Retraction) RETURN r.id, r.state")) == before
