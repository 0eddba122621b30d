"""The CLI's --json and the API answer alike: a command that does an API job prints that job's
answer, valid against its model, with the fields (and here the values) the route answers for
the same tenant. The vendor-portal story, whole: two gate decisions, the retraction, a recall."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from pydantic import TypeAdapter

from rescind.api.jobs import BY_NAME
from rescind.graph.store import TenantGraph, connect
from tests.support.api import make_story
from tests.support.paths import ROOT

# (the command, the job it does, the route's path under the tenant)
READS = [
    (["fragility", "pay-1042"], "fragility", "/memories/pay-1042/fragility"),
    (["audit-order"], "audit_order", "/audit-order"),
    (["recalls", "list"], "recall_list", "/recalls"),
    (["recalls", "show", "pay-1041"], "recall", "/recalls/pay-1041"),
    (["gate", "log"], "gate_log", "/gates"),
    (["memories", "list", "--limit", "100"], "memories", "/memories?limit=100"),
]


@pytest.fixture(scope="module")
def week(falkordb):
    """The whole story in a tenant of its own, the API on it with a token per role."""
    tenant = "cli-json-answers"
    story = make_story(falkordb, tenant, text=(ROOT / "examples/vendor-portal.jsonl").read_text())
    yield story
    TenantGraph(connect(falkordb), tenant).delete()


def cli_json(story, *args: str):
    env = {k: v for k, v in os.environ.items() if k != "RESCIND_GATE_CURRENCY"}
    res = subprocess.run([sys.executable, "-m", "rescind.cli", *args, "--json", "--url",
                          story.url, "--tenant", story.tenant], capture_output=True, text=True,
                         cwd=ROOT, timeout=120, env=env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def fields(answer) -> list:
    return [sorted(r) for r in answer] if isinstance(answer, list) else sorted(answer)


@pytest.mark.parametrize(("command", "job", "path"), READS, ids=[r[1] for r in READS])
def test_a_read_command_prints_the_route_s_answer(week, command, job, path):
    """Valid against the job's answer model, and the same fields and values as the route's."""
    cli = cli_json(week, *command)
    TypeAdapter(BY_NAME[job].answer).validate_python(cli)
    api = week.client.get(week.base + path, headers=week.as_("viewer"))
    assert api.status_code == 200, api.text
    assert cli, "the story gives the command something to show"
    assert fields(cli) == fields(api.json())
    assert cli == api.json()


def test_a_compromise_preview_prints_the_route_s_answer_but_the_console_s_drawing(week):
    """`compromise` (a preview) answers as `preview_retraction` does: the same fields, less the
    console's drawing (``graph``, which the MCP tool leaves out too)."""
    window = ["--from", "2026-02-01T00:00Z", "--to", "2026-04-01T00:00Z"]
    cli = cli_json(week, "compromise", "contract:acme", *window, "--reason", "a check")
    TypeAdapter(BY_NAME["preview_retraction"].answer).validate_python(cli)
    api = week.client.post(week.base + "/retractions/preview", headers=week.as_("security"),
                           json={"source": "contract:acme", "from": "2026-02-01T00:00Z",
                                 "to": "2026-04-01T00:00Z", "reason": "a check"})
    assert api.status_code == 200, api.text
    answer = api.json()
    assert "graph" in answer and "graph" in BY_NAME["preview_retraction"].tool_omits
    assert sorted(cli) == sorted(k for k in answer if k != "graph")
    assert cli["counts"] == answer["counts"] and cli["rev"] == answer["rev"]
