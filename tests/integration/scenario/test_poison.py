"""A NUL or another control character in any text of a scenario is `line N: <field>: …`, exit 2,
before anything reaches the server; before this, FalkorDB cut the query at the NUL and the
replay died with exit 1 and a Cypher syntax error."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rescind.cli.main import app as cli
from rescind.contract import layout
from rescind.scenario.format import ScenarioError
from rescind.scenario.replay import replay_text
from rescind.transport import connection

T = "2026-11-02T09:00:00Z"
LINES = [  # every op, each text field filled
    {"op": "source", "id": "portal", "kind": "portal", "name": "Acme portal", "domain": "acme"},
    {"op": "observe", "id": "o", "source": "portal", "text": "Acme account ZZ97", "at": T},
    {"op": "write", "id": "w", "kind": "belief", "agent": "ap", "text": "pay ZZ97",
     "premises": ["o"], "at": T},
    {"op": "act", "id": "pay", "agent": "ap", "text": "pay 500", "premises": ["w"], "at": T,
     "amount": 500, "currency": "EUR", "payee": "Acme", "account": "ZZ97", "executed": False},
    {"op": "gate", "action": "pay", "args": {"payee": "Acme", "account": "ZZ97",
                                             "currency": "EUR"}},
    {"op": "execute", "action": "pay", "at": T},
    {"op": "retract", "id": "r", "source": "portal", "reason": "hacked", "by": "sec"},
    {"op": "withdraw", "id": "wd", "memory": "w", "reason": "wrong", "by": "sec"},
    {"op": "correct", "id": "c", "memory": "o", "text": "Acme account ZZ98", "by": "reviewer"},
    {"op": "reinstate", "retraction": "r"},
    {"op": "approve", "action": "pay", "by": "fin"},
]
CASES = [(n, line["op"], field, sub) for n, line in enumerate(LINES, start=1)
         for field, value in line.items() if field != "op"
         for sub in ([None] if not isinstance(value, dict) else list(value))
         if isinstance(value if sub is None else value[sub], str | list)
         and field not in ("at", "kind")]


def text(lines: list[dict]) -> str:
    return "\n".join(json.dumps(x) for x in lines)


def poisoned(n: int, field: str, sub: str | None, c: str = "\x00") -> list[dict]:
    lines = [dict(x) for x in LINES]
    line = lines[n - 1]
    if sub is not None:
        line[field] = {**line[field], sub: "A" + c + "C"}
    elif isinstance(line[field], list):
        line[field] = ["a" + c + "b"]
    else:
        line[field] = line[field][:1] + c + line[field][2:]
    return lines


def tenants_of(url: str) -> set[bytes]:
    return set(connection.connect(url).hkeys(layout.TENANTS))


def test_the_scenario_with_every_field_is_valid(falkordb, tenant_name):
    report = replay_text(text(LINES), falkordb, tenant_name)
    assert report["memories"]["w"]["status"] == "OUT"


@pytest.mark.parametrize(("n", "op", "field", "sub"), CASES,
                         ids=[f"{op}.{f}{'.' + s if s else ''}" for _, op, f, s in CASES])
def test_a_nul_in_any_text_of_a_line_is_line_n_and_nothing_is_applied(falkordb, n, op, field,
                                                                      sub):
    before = tenants_of(falkordb)
    with pytest.raises(ScenarioError) as e:
        replay_text(text(poisoned(n, field, sub)), falkordb, f"poison-{op}-{field}")
    message = str(e.value)
    assert message.startswith(f"line {n}: {field}"), message
    assert "must not contain NUL" in message or field in ("currency", "args"), message
    assert tenants_of(falkordb) == before  # not even the tenant was created


def test_the_command_says_line_n_and_exits_2(falkordb, tmp_path):
    """`rescind replay` with a NUL (as the JSON escape \\u0000) in a reason, and an escape
    character in a text: each bad line named, exit 2, nothing left on the server."""
    lines = poisoned(7, "reason", None)
    lines[1] = {**lines[1], "text": "Acme\x1b[31m account"}
    path = tmp_path / "poison.jsonl"
    path.write_text(text(lines))
    before = tenants_of(falkordb)
    res = CliRunner().invoke(cli, ["replay", str(path), "--url", falkordb])
    assert res.exit_code == 2, res.output
    assert "line 2: text: must not contain NUL" in res.output
    assert "line 7: reason: must not contain NUL" in res.output
    assert "Cypher" not in res.output and "errMsg" not in res.output
    assert tenants_of(falkordb) == before


def test_a_raw_control_byte_is_malformed_json_on_its_line(falkordb):
    raw = text(LINES[:2]) + '\n{"op": "write", "id": "w", "kind": "belief", "agent": "a\x01p",' \
        ' "text": "x", "premises": ["o"], "at": "' + T + '"}'
    with pytest.raises(ScenarioError, match=r"^line 3: malformed JSON: Invalid control"):
        replay_text(raw, falkordb)


def test_a_line_separator_in_a_text_is_text_not_a_new_line(falkordb, tenant_name):
    """U+2028 (a line separator) is text inside a JSON string: only \\n ends a line."""
    lines = [dict(x) for x in LINES[:3]]
    lines[1]["text"] = "Acme\u2028account ZZ97"
    report = replay_text(text(lines), falkordb, tenant_name)
    assert report["memories"]["o"]["status"] == "IN"
