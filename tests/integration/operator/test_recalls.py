"""Finance's commands (`rescind recalls list|show|reject|annotate|approve|export`) and the
reinstatement's warning, at the shell, against the real server."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rescind.cli.main import app
from rescind.graph.store import TenantGraph, connect
from rescind.operator.audit import AuditLog
from tests.support.recalls import ATTACK, COMPROMISE, NAME, NS, check_camt056, replay_finance_story
from tests.support.shell import signed

WINDOW = ["--from", COMPROMISE["from"], "--to", COMPROMISE["to"]]


@pytest.fixture
def story(falkordb, tenant_name):
    """The finance story with the portal compromised (r-fin), committed at the shell."""
    replay_finance_story(falkordb, tenant_name)
    code, d, _ = cli((falkordb, tenant_name), "compromise", "portal:acme", *WINDOW, "--reason",
                     COMPROMISE["reason"], "--commit", "--id", "r-fin", "--by", "sam")
    assert code == 0 and d["committed"] is True
    yield falkordb, tenant_name
    TenantGraph(connect(falkordb), tenant_name).delete()


def cli(story, *args: str, as_json: bool = True) -> tuple[int, object, str]:
    url, tenant = story
    res = CliRunner().invoke(app, [*args, "--url", url, "--tenant", tenant,
                                   *(["--json"] if as_json else [])])
    body = (json.loads(res.stdout) if as_json else res.stdout) if res.exit_code == 0 else None
    return res.exit_code, body, res.stderr if res.exit_code else ""


def test_finance_reviews_rejects_annotates_approves_and_exports_at_the_shell(story, tmp_path):
    """`show` prints the draft with the attacker's line whole; `reject` needs a reason and
    signs with --by; `annotate` adds a note; `approve`, then `export --format camt.056 --out`
    writes a schema-valid message and `--format csv` prints the CSV; `list` shows who decided.
    Each decision is in the audit log (via cli)."""
    code, text, _ = cli(story, "recalls", "show", "pay-1041", as_json=False)
    assert code == 0 and text.startswith("[drafted]\nRECALL REQUEST - DRAFT")
    assert ATTACK in " ".join(text.split()) and f"Payee: {NAME}" in text
    code, _, message = cli(story, "recalls", "reject", "pay-1042", "--reason", "  ", "--by", "fran")
    assert code == 2 and "say why the recall is rejected" in message
    code, r, _ = cli(story, "recalls", "reject", "pay-1042", "--reason", "Acme says it was paid "
                     "to its own account", "--by", "fran")
    assert code == 0 and r["state"] == "rejected" and r["rejected"]["by"] == signed("fran")
    code, r, _ = cli(story, "recalls", "annotate", "pay-1041", "Bank case C-778 opened",
                     "--by", "fran")
    assert code == 0 and [(n["by"], n["text"]) for n in r["notes"]] == [
        (signed("fran"), "Bank case C-778 opened")]
    code, _, message = cli(story, "recalls", "export", "pay-1041", "--by", "fran")
    assert code == 2 and "only an approved recall is exported" in message
    code, r, _ = cli(story, "recalls", "approve", "pay-1041", "--by", "fran")
    assert code == 0 and r["state"] == "approved"
    code, _, message = cli(story, "recalls", "reject", "pay-1041", "--reason", "x", "--by", "fran")
    assert code == 2 and "cannot be rejected now" in message
    code, _, message = cli(story, "recalls", "approve", "pay-1042", "--by", "fran")
    assert code == 2 and f"rejected by {signed('fran')}" in message

    out = tmp_path / "recall.xml"
    code, text, _ = cli(story, "recalls", "export", "pay-1041", "--format", "camt.056", "--out",
                        str(out), "--by", "fran", as_json=False)
    # The terminal's width may wrap the path anywhere (a worker's temporary folder is longer).
    assert code == 0 and f"to{out}" in "".join(text.split())
    tx = check_camt056(out.read_text())
    assert tx.find("c:OrgnlTxId", NS).text == "PAY-0001"
    code, text, _ = cli(story, "recalls", "export", "pay-1041", "--format", "csv", "--by", "fran",
                        as_json=False)
    assert code == 0 and text.splitlines()[0].startswith("payment,payment_id,state,payee_name")
    assert text.splitlines()[1].startswith("pay-1041,")
    code, _, message = cli(story, "recalls", "export", "pay-1041", "--format", "pdf",
                           "--by", "fran")
    assert code == 2 and "unknown export format 'pdf'" in message

    code, rows, _ = cli(story, "recalls", "list")
    assert [(r["name"], r["state"]) for r in rows] == [("pay-1042", "rejected"),
                                                       ("pay-1041", "exported")]
    code, text, _ = cli(story, "recalls", "list", as_json=False)
    [row] = [line for line in text.splitlines() if "pay-1042" in line]
    assert "rejected" in row and f"{signed('fran')}," in " ".join(text.split())
    log = [(e["action"], e["result"], e["who"], e["via"])
           for e in reversed(AuditLog(connect(story[0])).entries(story[1], 30))
           if e["action"].startswith("recall.")]
    assert [(a, r) for a, r, _, _ in log] == [
        ("recall.reject", "refused"), ("recall.reject", "ok"), ("recall.annotate", "ok"),
        ("recall.export", "refused"), ("recall.approve", "ok"), ("recall.reject", "refused"),
        ("recall.approve", "refused"), ("recall.export", "ok"), ("recall.export", "ok"),
        ("recall.export", "refused")]
    assert {(w, v) for _, _, w, v in log} == {(signed("fran"), "cli")}


def test_reinstate_warns_of_an_approved_recall_in_the_outbox(story):
    """`rescind reinstate` after finance approved pay-1041's recall: the JSON lists the outbox
    entry to pull, and the printed answer says it in words; before approval there is nothing
    to pull."""
    code, r, _ = cli(story, "recalls", "approve", "pay-1041", "--by", "fran")
    assert code == 0
    code, text, _ = cli(story, "reinstate", "r-fin", "--by", "sam", "--commit", as_json=False)
    flat = " ".join(text.split())
    assert code == 0 and "1 to pull from the outbox" in flat
    assert f"pay-1041 is IN again, but its recall was approved by {signed('fran')}" in flat
    assert f"pull {r['outbox']} from the outbox" in flat
    # Retracted again and reinstated again: still in the outbox, still warned, in JSON too.
    code, d, _ = cli(story, "compromise", "portal:acme", *WINDOW, "--reason", "again",
                     "--commit", "--id", "r-again", "--by", "sam")
    code, d, _ = cli(story, "reinstate", "r-again", "--by", "sam", "--commit")
    assert code == 0 and [p["outbox"] for p in d["recalls_to_pull"]] == [r["outbox"]]
    assert any(w.startswith("pay-1041 is IN again") for w in d["warnings"])
