"""`rescind audit list` against the real server: the log as sentences a person reads, a page
at a time, times to the second, whole at 80 columns."""

from __future__ import annotations

import json
import re

import redis
from typer.testing import CliRunner

from rescind.cli.main import app
from rescind.contract import layout
from rescind.operator.audit import Actor, AuditLog


def test_the_log_reads_as_sentences_a_page_at_a_time(falkordb, tenant_name):
    """Three decisions: a page of two says who did what, why, with the amount, and how to get
    the older one; the next page holds it; --json gives the same page as data."""
    conn = redis.Redis.from_url(falkordb)
    log = AuditLog(conn)
    fran = Actor("fran@harborfinch.example", "finance", "t1", "api")
    try:
        log.record(tenant_name, Actor("sam", "operator", "", "cli"), "retraction.commit",
                   "portal:acme", detail={"retraction": "r-1", "counts": {"beliefs": 2},
                                          "reason": "phished", "held": [
                                              {"id": "pay-1042", "amount": 34500}]})
        log.record(tenant_name, fran, "recall.approve", "pay-1041",
                   detail={"action": "act-1", "amount": 6000})
        log.record(tenant_name, fran, "recall.export", "pay-1041",
                   detail={"amount": 6000, "state": "exported", "format": "camt.056"})
        run = CliRunner().invoke
        on = ["--tenant", tenant_name, "--url", falkordb]
        first = run(app, ["audit", "list", *on, "--limit", "2"], env={"COLUMNS": "80"})
        assert first.exit_code == 0, first.stderr
        text = " ".join(first.stdout.split())
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC fran@harborfinch.example "
                         r"\(finance, via api\) exported the recall of pay-1041 for the bank; "
                         r"6,000.00 USD; now exported; as camt.056\.", text), text
        assert "approved the recall of pay-1041; 6,000.00 USD." in text
        assert "declared portal:acme" not in text
        [cursor] = re.findall(r"2 of 3 entries; older: --before (\S+)", text)
        second = run(app, ["audit", "list", *on, "--limit", "2", "--before", cursor])
        flat = " ".join(second.stdout.split())
        assert ("sam (operator, via cli) declared portal:acme compromised; 2 beliefs OUT; 1 "
                "payment held: pay-1042 34,500.00 USD; why: phished; as r-1.") in flat
        assert "1 of 3 entries" in flat and "--before" not in flat
        whole = run(app, ["audit", "list", *on, "--limit", "3"])
        assert "3 of 3 entries" in whole.stdout and "--before" not in whole.stdout
        data = json.loads(run(app, ["audit", "list", *on, "--limit", "2", "--json"]).stdout)
        assert data["total"] == 3 and data["next_before"] == cursor
        assert data["entries"][0]["detail"]["format"] == "camt.056"
        bad = run(app, ["audit", "list", *on, "--before", "yesterday"])
        assert bad.exit_code == 2 and "not an entry id" in bad.stderr
    finally:
        conn.delete(*conn.scan_iter(match=f"{layout.audit_key(tenant_name)}*"))
