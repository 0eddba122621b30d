"""Tenants exist only when created: by the admin API, by `rescind tenant create`, by a replay
for itself. A command on a tenant never created says so (exit 2) instead of starting its graph;
graphs older than the registry are registered once."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from rescind.api import create_app
from rescind.cli.main import app as cli
from rescind.contract import layout
from rescind.graph import tenants
from rescind.graph.store import TenantGraph, connect
from rescind.runtime.settings import Settings
from rescind.scenario.format import ScenarioError
from rescind.scenario.replay import replay_text
from rescind.transport import connection
from tests.support.shell import signed
from tests.support.texts import APPROVE_WITHOUT_DRAFT

ADMIN = "test-admin-token-not-for-production"


def test_the_admin_api_creates_a_tenant_once_and_lists_it(falkordb, tenant_name):
    name = f"{tenant_name}-api"
    client = TestClient(create_app(Settings(url=falkordb, admin_token=ADMIN)))
    admin = {"Authorization": f"Bearer {ADMIN}"}
    try:
        first = client.post("/api/v1/tenants", json={"name": name}, headers=admin)
        again = client.post("/api/v1/tenants", json={"name": name}, headers=admin)
        assert first.json() == {"name": name, "created": True}
        assert again.json() == {"name": name, "created": False}
        listed = {t["name"]: t for t in client.get("/api/v1/tenants", headers=admin).json()}
        assert listed[name]["created_by"] == "admin" and listed[name]["created_at"]
        assert TenantGraph(connect(falkordb), name).exists()  # its indexes made at once
        unknown = client.post(f"/api/v1/tenants/{name}x/tokens", headers=admin,
                              json={"role": "viewer", "who": "sam"})
        assert unknown.status_code == 404 and "create it first" in unknown.json()["detail"]
    finally:
        tenants.drop(connect(falkordb), name)


def test_the_cli_creates_lists_and_refuses_commands_on_an_unknown_tenant(falkordb, tenant_name):
    name = f"{tenant_name}-cli"
    runner = CliRunner()
    try:
        made = runner.invoke(cli, ["tenant", "create", name, "--by", "sam", "--url", falkordb,
                                   "--json"])
        assert made.exit_code == 0 and json.loads(made.output) == {"name": name,
                                                                    "created": True}
        again = runner.invoke(cli, ["tenant", "create", name, "--url", falkordb])
        assert again.exit_code == 0 and "exists already" in again.output
        listed = runner.invoke(cli, ["tenant", "list", "--url", falkordb, "--json"])
        assert {"name": name} | {"created_by": signed("sam")} in [
            {k: t[k] for k in ("name", "created_by")} for t in json.loads(listed.output)]
        bad = runner.invoke(cli, ["tenant", "create", "Not A Name", "--url", falkordb])
        assert bad.exit_code == 2 and "bad tenant name" in bad.output
        ghost = f"{tenant_name}-ghost"
        for args in (["explain", "x"], ["audit-order"], ["recalls", "list"],
                     ["compromise", "portal:x", "--all-time", "--reason", "hacked"]):
            res = runner.invoke(cli, [*args, "--tenant", ghost, "--url", falkordb])
            assert res.exit_code == 2, res.output
            assert f"unknown tenant '{ghost}': create it first" in res.output
        assert not TenantGraph(connect(falkordb), ghost).exists()
    finally:
        tenants.drop(connect(falkordb), name)


def test_a_replay_creates_its_tenant_and_a_failed_one_leaves_none(falkordb, tenant_name):
    conn = connection.connect(falkordb)
    ok, failed = f"{tenant_name}-ok", f"{tenant_name}-failed"
    try:
        replay_text('{"op":"source","id":"s","kind":"portal"}', falkordb, ok)
        assert json.loads(conn.hget(layout.TENANTS, ok))["created_by"] == "replay"
        try:
            replay_text(APPROVE_WITHOUT_DRAFT, falkordb, failed)
        except ScenarioError as exc:
            assert str(exc).startswith("line 4")
        assert not conn.hexists(layout.TENANTS, failed)
        assert not TenantGraph(connect(falkordb), failed).exists()
        # A tenant created beforehand, still empty, is a fresh one: replayed into, and kept.
        replay_text(APPROVE_WITHOUT_DRAFT.split("\n")[0], falkordb, tenant_name)
        assert conn.hexists(layout.TENANTS, tenant_name)
    finally:
        tenants.drop(connect(falkordb), ok)


def test_graphs_older_than_the_registry_are_registered_once(falkordb, tenant_name):
    conn = connect(falkordb)
    old = f"{tenant_name}-old"
    TenantGraph(conn, old).ensure_schema()  # a graph as an earlier version made it
    conn.delete(layout.TENANTS_ADOPTED)  # as on a server that never ran this version
    try:
        assert old in tenants.adopt_graphs(conn)
        assert tenants.registered(conn)[old]["created_by"] == "adopted: it had a graph"
        tenants.drop(conn, old)
        TenantGraph(conn, old).ensure_schema()
        assert tenants.adopt_graphs(conn) == []  # once per server: later graphs are not
        assert not tenants.known(conn, old)
    finally:
        tenants.drop(conn, old)


def test_the_writers_cache_knows_a_new_tenant_at_once(falkordb, tenant_name):
    conn = connect(falkordb)
    known = tenants.Known(conn, ttl_s=60)
    name = f"{tenant_name}-new"
    assert not known(name)
    try:
        tenants.create(conn, name, by="tests", schema=False)
        assert known(name)  # an unknown tenant is never remembered as unknown
    finally:
        tenants.drop(conn, name)
