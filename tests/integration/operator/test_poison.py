"""The `rescind` commands check what reaches the graph as the API does: an argument holding NUL
or another control character is a usage error naming it (exit 2), before anything is done."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from rescind.cli.main import app as cli
from rescind.graph.store import TenantGraph, connect

CASES = [
    (["compromise", "portal:acme", "--reason", "taken\x00over"], "'--reason'"),
    (["compromise", "portal:acme", "--reason", "hacked", "--by", "sam\tlee"], "'--by'"),
    (["compromise", "portal:\x1bacme", "--reason", "hacked"], "'source'"),
    (["compromise", "portal:acme", "--reason", "hacked", "--id", "r\x00"], "'--id'"),
    (["compromise", "portal:acme", "--reason", "hacked", "--from", "2026-11-01\x00"],
     "'--from'"),
    (["reinstate", "r\x00"], "'retraction'"),
    (["reinstate", "r-1", "--by", "sam\x85"], "'--by'"),
    (["explain", "pay\x00"], "'memory'"),
    (["fragility", "pay\x7f"], "'action'"),
    (["recalls", "approve", "pay", "--by", "fin\x00"], "'--by'"),
    (["gate", "log", "--action", "pay\x00"], "'--action'"),
    (["api", "token", "create", "--role", "viewer", "--who", "sam\x1b[1m"], "'--who'"),
    (["tenant", "create", "acme", "--by", "sam\x00"], "'--by'"),
]


@pytest.mark.parametrize(("args", "named"), CASES, ids=[" ".join(a[:2]) + " " + n
                                                         for a, n in CASES])
def test_a_control_character_in_an_argument_is_a_usage_error_naming_it(falkordb, tenant_name,
                                                                       args, named):
    res = CliRunner().invoke(cli, [*args, "--tenant", tenant_name, "--url", falkordb]
                             if args[0] != "tenant" else [*args, "--url", falkordb])
    assert res.exit_code == 2, res.output
    flat = " ".join(res.output.replace("│", " ").split())
    assert f"Invalid value for {named}" in flat and "must not contain NUL" in flat, flat
    assert not TenantGraph(connect(falkordb), tenant_name).exists()  # nothing reached it


def test_a_reason_may_hold_tab_and_newline(falkordb, tenant_name):
    res = CliRunner().invoke(cli, ["compromise", "portal:acme", "--all-time", "--reason",
                                   "taken\tover\nby x",
                                   "--tenant", tenant_name, "--url", falkordb])
    assert res.exit_code == 2 and "unknown source 'portal:acme'" in res.output  # got that far
