"""Issue 31, the CLI: tables a person reads at 80 columns with whole ids and amounts, one money
format, a compromise that names its window (or says it has none), and times typed without a
zone read as UTC and said so. Each command runs as a person runs it: a process, its terminal
80 columns wide."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rescind.graph.store import TenantGraph, connect
from rescind.scenario.replay import replay_text
from rescind.views.operator import money
from tests.support.paths import ROOT

WINDOW = ["--from", "2026-11-01T00:00Z", "--to", "2026-11-03T00:00Z"]


# A memory named as an agent's store names its notes: 70 characters, as in the demo's week.
LONG_ID = "notes/" + "d21bcfc637cacac75d282419f43a167ce6c3abfe74ec2dd5da44de6b99a5d6aa"
LONG = json.dumps({"op": "write", "id": LONG_ID, "kind": "belief", "agent": "ap-agent",
                   "text": "Acme's remittance contact is ar@acme.example", "premises": ["n-bank"],
                   "at": "2026-11-02T09:20:00Z"})


@pytest.fixture
def week(falkordb, tenant_name):
    """The shipped vendor-portal story, whole (two gate decisions, the retraction, a recall),
    and one memory with a 70-character id."""
    lines = (ROOT / "examples/vendor-portal.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"id": "n-remit"' in line)
    replay_text("\n".join([*lines[:at], LONG, *lines[at:]]), falkordb, tenant_name)
    yield falkordb, tenant_name
    TenantGraph(connect(falkordb), tenant_name).delete()


def rescind(week, *args: str, columns: int = 80) -> subprocess.CompletedProcess:
    url, tenant = week
    env = {**os.environ, "COLUMNS": str(columns)}
    env.pop("RESCIND_GATE_CURRENCY", None)
    return subprocess.run([sys.executable, "-m", "rescind.cli", *args, "--url", url, "--tenant",
                           tenant], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=env)


def _lines(res: subprocess.CompletedProcess) -> list[str]:
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


@pytest.mark.parametrize(("command", "key"), [
    (["gate", "log"], None), (["recalls", "list"], None), (["memories", "list", "--limit", "200"],
                                                           "items")])
def test_tables_at_80_columns_show_every_id_and_amount_whole(week, command, key):
    """`gate log`, `recalls list`, `memories list` in an 80-column terminal: no line is wider,
    and each row's id (its name when it has one) and amount (with its currency) stand whole on
    one line, never cut with an ellipsis or split over two."""
    rows = json.loads(rescind(week, *command, "--json").stdout)
    rows = rows[key] if key else rows
    assert rows, "the story gives this command something to show"
    if key:
        assert LONG_ID in [r.get("name") or r["id"] for r in rows]
    lines = _lines(rescind(week, *command))
    assert max(len(line) for line in lines) <= 80
    for r in rows:
        ident = r.get("name") or r.get("action") or r["id"]
        assert any(ident in line for line in lines), (ident, lines)
        if r.get("amount") is not None:
            amount = money(r["amount"], r.get("currency"))
            assert any(amount in line for line in lines), (amount, lines)
    wide = _lines(rescind(week, *command, columns=200))  # a table there, the same cells whole
    for r in rows:
        ident = r.get("name") or r.get("action") or r["id"]
        assert any(ident in line for line in wide)


def test_every_amount_prints_one_way_with_its_currency(week):
    """The gate log and the recall list print amounts as 6,000.00 USD (an amount that names no
    currency in the gate's); neither prints a dollar sign of its own."""
    gate = "\n".join(_lines(rescind(week, "gate", "log")))
    recalls = "\n".join(_lines(rescind(week, "recalls", "list")))
    for text in (gate, recalls):
        assert " USD" in text and "$" not in text
    assert "6,000.00 USD" in recalls
    assert money(2400, None) == "2,400.00 USD" and money(None) == "-"
    assert money(12.5, "EUR") == "12.50 EUR"


def test_the_gate_log_says_why_in_words_not_the_recorded_reason(week):
    """`gate log` says why each decision went as it did ("confirmed by only 1 independent
    source; 2 needed") and who an attacker would need; the terse recorded reason is only in
    --json."""
    rows = json.loads(rescind(week, "gate", "log", "--json").stdout)
    assert any(r["reason"].startswith(("allowed: fragility", "blocked:")) for r in rows)
    text = " ".join(" ".join(_lines(rescind(week, "gate", "log", columns=200))).split())
    assert "independent source" in text and "needed" in text
    assert "allowed: fragility" not in text and "would fall" not in text


def test_a_compromise_without_a_window_needs_all_time(week):
    """No --from, --to or --all-time: refused (exit 2) saying how to give a window, nothing
    previewed; --all-time with a window is refused too; --all-time previews and says, in its
    title and in the command to commit it, that it covers all time."""
    bare = rescind(week, "compromise", "portal:acme", "--reason", "hacked")
    assert bare.returncode == 2 and "no window" in bare.stderr and "--all-time" in bare.stderr
    both = rescind(week, "compromise", "portal:acme", "--all-time", *WINDOW, "--reason", "x")
    assert both.returncode == 2 and "not both" in both.stderr
    lines = _lines(rescind(week, "compromise", "portal:acme", "--all-time", "--reason", "hacked",
                           columns=200))
    assert lines[0].startswith("Preview: portal:acme compromised over ALL TIME")
    assert "run it again with --all-time --commit --rev" in lines[-1]


def test_a_preview_restates_its_window(week):
    """A windowed preview names its window in its title and in the command that commits it."""
    lines = _lines(rescind(week, "compromise", "portal:acme", *WINDOW, "--reason", "hacked",
                           columns=200))
    span = "from 2026-11-01 00:00 UTC to 2026-11-03 00:00 UTC"
    assert span in lines[0] and span in lines[-1] and "--commit --rev" in lines[-1]


def test_times_without_a_zone_are_read_as_utc_and_said_so(week):
    """`--from 2026-11-01 00:00 --to 2026-11-03` is the window of the same times in UTC (the
    same preview), and stderr says how each was read; a time that is no time is refused."""
    zoned = json.loads(rescind(week, "compromise", "portal:acme", *WINDOW, "--reason", "x",
                               "--json").stdout)
    res = rescind(week, "compromise", "portal:acme", "--from", "2026-11-01 00:00", "--to",
                  "2026-11-03", "--reason", "x", "--json")
    assert res.returncode == 0, res.stderr
    plain = json.loads(res.stdout)
    assert plain["counts"] == zoned["counts"] and plain["rev"] == zoned["rev"]
    assert "--from 2026-11-01 00:00 has no zone: read as UTC, 2026-11-01 00:00:00 UTC" in res.stderr
    assert "--to 2026-11-03 has no zone: read as UTC, 2026-11-03 00:00:00 UTC" in res.stderr
    bad = rescind(week, "compromise", "portal:acme", "--from", "yesterday", "--reason", "x")
    assert bad.returncode == 2 and "not an ISO 8601" in bad.stderr
    audit = rescind(week, "audit", "export", "--since", "2026-11-01")
    assert audit.returncode == 0 and "--since 2026-11-01 has no zone: read as UTC" in audit.stderr


def test_a_shell_decision_is_signed_by_the_os_user_with_by_as_a_note(week):
    """`--by` cannot put a name in place of the OS user's: the note on the recall and its audit
    entry are signed 'root (--by fran@harborfinch.example)'; without --by, or with the OS
    user's own name, the OS user alone."""
    import getpass

    from rescind.operator.audit import AuditLog

    me = getpass.getuser()
    claimed = json.loads(rescind(week, "recalls", "annotate", "pay-1041", "bank case opened",
                                 "--by", "fran@harborfinch.example", "--json").stdout)
    plain = json.loads(rescind(week, "recalls", "annotate", "pay-1041", "called the bank",
                               "--json").stdout)
    own = json.loads(rescind(week, "recalls", "annotate", "pay-1041", "again", "--by", me,
                             "--json").stdout)
    assert [n["by"] for n in own["notes"]] == [f"{me} (--by fran@harborfinch.example)", me, me]
    assert claimed["notes"][0]["by"] != "fran@harborfinch.example"
    assert plain["notes"][1]["by"] == me
    entries = AuditLog(connect(week[0])).entries(week[1], 3)
    assert [e["who"] for e in entries] == [me, me, f"{me} (--by fran@harborfinch.example)"]
