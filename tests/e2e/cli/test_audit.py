"""Decisions made with the `rescind` command while the API serves the same server are in the
tenant's audit log, signed with --by or the OS user (never a made-up name), refusals included;
`rescind audit export` writes the log, live and archived, as JSON lines."""

from __future__ import annotations

import getpass
import json
import os
import subprocess
import sys
from datetime import UTC, datetime

import pytest
import redis
from fastapi.testclient import TestClient

from rescind.api import create_app
from rescind.contract import layout
from rescind.operator.audit import AuditLog
from rescind.runtime.settings import Settings
from tests.support.api import ADMIN, forget, make_story
from tests.support.paths import ROOT
from tests.support.shell import signed

RESCIND = [sys.executable, "-m", "rescind.cli"]
WINDOW = ["--from", "2026-11-01T00:00Z", "--to", "2026-11-03T00:00Z"]


def rescind(*args: str, ok: bool = True) -> subprocess.CompletedProcess:
    """The command, its audit log kept to 5 live entries (RESCIND_AUDIT_MAX_LIVE), as the
    API's here, so that its decisions rotate the older entries into the archive."""
    env = {**os.environ, "RESCIND_AUDIT_MAX_LIVE": "5"}
    res = subprocess.run([*RESCIND, *args], capture_output=True, text=True, cwd=ROOT,
                         timeout=120, env=env)
    if ok:
        assert res.returncode == 0, res.stderr
    return res


@pytest.fixture
def story(falkordb, tenant_name):
    """The vendor-portal story with the API on the same server (its audit log kept to 5 live
    entries, so that the CLI's decisions rotate into the archive)."""
    app = create_app(Settings(url=falkordb, admin_token=ADMIN, audit_max_live=5))
    s = make_story(falkordb, tenant_name, TestClient(app))
    yield s
    forget(falkordb, tenant_name)


def test_the_shells_decisions_are_audited_and_exported(story, tmp_path):
    """Preview, commit, approve, a refused approve, reinstate, token create and revoke from the
    shell: each is an entry (via cli, role operator) signed by --by or by the OS user; the
    retraction itself is signed the same way; export returns them all, in order, with the
    API's own entries, though most were rotated out of the live log."""
    url, t = story.url, story.tenant
    on = ["--url", url, "--tenant", t, "--json"]
    start = datetime.now(UTC)
    preview = json.loads(rescind("compromise", "portal:acme", *WINDOW, "--reason", "hacked",
                                 *on).stdout)
    rescind("compromise", "portal:acme", *WINDOW, "--reason", "hacked", "--commit", "--rev",
            str(preview["rev"]), "--id", "r-cli", "--by", "sam@harborfinch.example", *on)
    rescind("recalls", "approve", "pay-1041", "--by", "fran@harborfinch.example", *on)
    again = rescind("recalls", "approve", "pay-1041", "--by", "fran@harborfinch.example", *on,
                    ok=False)
    assert again.returncode == 2 and "approved already" in again.stderr
    rescind("reinstate", "r-cli", "--commit", *on)
    made = json.loads(rescind("api", "token", "create", "--role", "viewer", "--who", "vic",
                              "--by", "ops@harborfinch.example", *on).stdout)
    rescind("api", "token", "revoke", made["id"], "--by", "ops@harborfinch.example", *on)
    empty = rescind("reinstate", "r-cli", "--by", " ", *on, ok=False)
    assert empty.returncode == 2 and "say who decides" in empty.stderr

    me = getpass.getuser()
    expected = [
        ("retraction.preview", "portal:acme", me, "ok", "200"),
        ("retraction.commit", "portal:acme", signed("sam@harborfinch.example"), "ok", "200"),
        ("recall.approve", "pay-1041", signed("fran@harborfinch.example"), "ok", "200"),
        ("recall.approve", "pay-1041", signed("fran@harborfinch.example"), "refused", "409"),
        ("retraction.reinstate", "r-cli", me, "ok", "200"),
        ("token.create", "viewer:vic", signed("ops@harborfinch.example"), "ok", "200"),
        ("token.revoke", made["id"], signed("ops@harborfinch.example"), "ok", "200"),
    ]
    api_log = story.client.get(f"{story.base}/audit", headers=story.as_("security"),
                               params={"limit": 20}).json()  # live, then archived
    shell = [e for e in api_log if e["via"] == "cli"]
    assert [(e["action"], e["target"], e["who"], e["result"], e["status"])
            for e in reversed(shell)] == expected
    assert {e["role"] for e in shell} == {"operator"}
    r = story.client.get(f"{story.base}/retractions/r-cli", headers=story.as_("viewer")).json()
    assert (r["by"], r["reinstated_by"]) == (signed("sam@harborfinch.example"), me)

    assert redis_archives(story.url, t), "kept to 5 live entries, the older ones are archived"
    out = tmp_path / "audit.jsonl"
    res = rescind("audit", "export", "--since", start.isoformat(), "--tenant", t, "--url", url,
                  "--out", str(out), "--json")
    assert json.loads(res.stdout)["entries"] == len(out.read_text().splitlines())
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["action"], e["target"], e["who"], e["result"], e["status"])
            for e in lines if e["via"] == "cli"] == expected
    assert all(e["tenant"] == t for e in lines)
    assert lines == list(AuditLog(story.graph.conn).export([t], since=start))
    everything = rescind("audit", "export", "--since", start.isoformat(), "--url", url)
    mine = [json.loads(x) for x in everything.stdout.splitlines()]
    assert [e for e in mine if e["tenant"] == t] == lines
    late = rescind("audit", "export", "--since", "2999-01-01T00:00Z", "--tenant", t, "--url", url)
    assert late.stdout == "" and "0 audit entries" in late.stderr
    bad = rescind("audit", "export", "--since", "yesterday", "--url", url, ok=False)
    assert bad.returncode == 2 and "not an ISO 8601 time" in bad.stderr


def redis_archives(url: str, tenant: str) -> list[bytes]:
    return redis.Redis.from_url(url).zrange(layout.audit_archives_key(tenant), 0, -1)


def test_a_replay_is_one_entry_of_the_new_tenants_log(falkordb, tenant_name):
    """`rescind replay` builds a fresh tenant from a story's past: one entry says who replayed
    which file and what came of it; replaying onto a tenant that exists is a counted refusal."""
    try:
        on = ["--url", falkordb, "--tenant", tenant_name, "--json"]
        rescind("replay", "examples/vendor-portal.jsonl", "--by", "rita@harborfinch.example", *on)
        twice = rescind("replay", "examples/vendor-portal.jsonl", *on, ok=False)
        assert twice.returncode == 2 and "fresh tenant" in twice.stderr
        refused, done = AuditLog(redis.Redis.from_url(falkordb)).entries(tenant_name, 2)
        assert (done["action"], done["target"], done["who"], done["via"], done["result"]) == (
            "scenario.replay", "vendor-portal.jsonl", signed("rita@harborfinch.example"), "cli",
            "ok")
        assert done["detail"]["gates"] == 2
        assert (refused["result"], refused["status"], refused["who"]) == (
            "refused", "422", getpass.getuser())
    finally:
        forget(falkordb, tenant_name)
