"""The `rescind replay` command as a user runs it."""

import json
import os
import subprocess
import sys

from tests.support.paths import ROOT

RESCIND = [sys.executable, "-m", "rescind.cli"]


def rescind(*args, **kw):
    return subprocess.run([*RESCIND, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120, **kw)


def test_replay_prints_the_json_report_of_the_shipped_example(falkordb):
    """The vendor-portal example: bank note OUT, remit IN, big payment held, small recalled."""
    res = rescind("replay", "examples/vendor-portal.jsonl", "--json", "--url", falkordb)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["memories"]["n-bank"]["status"] == "OUT"
    assert report["memories"]["n-remit"]["status"] == "IN"
    assert report["held"] == ["pay-1042"]
    assert [(r["action"], r["amount"], r["state"]) for r in report["recalls"]] == [
        ("pay-1041", 6000, "approved")]
    assert report["gates"][0]["allowed"] is False and report["gates"][0]["fragility"] == 1


def test_replay_without_json_is_readable(falkordb):
    """Without --json the summary names what went OUT, the held payment and the recall."""
    res = rescind("replay", "examples/vendor-portal.jsonl", "--url", falkordb)
    assert res.returncode == 0, res.stderr
    assert "Held payments: pay-1042" in res.stdout
    assert "RECALL REQUEST" in res.stdout and "refused" in res.stdout


def test_replay_starts_its_own_server_when_no_url_is_given():
    """With no --url the command starts and stops the embedded FalkorDB by itself."""
    res = rescind("replay", "examples/vendor-portal.jsonl", "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["held"] == ["pay-1042"]


def test_replay_judges_gate_lines_with_the_gate_settings(falkordb):
    """The first gate of the example refuses 34,500 resting on one trust domain; raise
    RESCIND_GATE_THRESHOLD above it (or lower RESCIND_GATE_MIN_DOMAINS to 1, through the
    streams) and the same replay allows it, as the gate workers would."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("RESCIND_GATE_")}
    cases = [({}, (), False), ({"RESCIND_GATE_THRESHOLD": "50000"}, (), True),
             ({"RESCIND_GATE_MIN_DOMAINS": "1"}, ("--via-streams",), True)]
    for env, extra, allowed in cases:
        res = rescind("replay", "examples/vendor-portal.jsonl", "--json", "--url", falkordb,
                      *extra, env={**base, **env})
        assert res.returncode == 0, res.stderr
        first = json.loads(res.stdout)["gates"][0]
        assert (first["action"], first["allowed"], first["fragility"]) == ("pay-1042", allowed, 1), env
        assert json.loads(res.stdout)["held"] == ["pay-1042"]


def test_bad_lines_exit_2_with_line_numbers_on_stderr(falkordb, tmp_path):
    """Each bad line is reported as 'line N: reason' on stderr, and the exit code is 2."""
    f = tmp_path / "bad.jsonl"
    f.write_text('# comment\n\n{"op":"source","id":"s","kind":"k"}\n{"op":"observe"}\n[1]\n')
    res = rescind("replay", str(f), "--url", falkordb)
    assert res.returncode == 2
    assert res.stderr.splitlines() == [
        "line 4: missing field 'id'; missing field 'source'; missing field 'text'; "
        "missing field 'at'",
        "line 5: a line must be a JSON object",
    ]
    assert res.stdout == ""


def test_one_missing_field_is_one_line_in_the_files_own_words(falkordb, tmp_path):
    """The shipped example with the portal's `id` left out: one line on stderr, for that line
    (not one more for each of the three lines that name portal:acme); an error found while
    applying names the payment as the file does (pay-1041), not by the graph's id."""
    lines = (ROOT / "examples/vendor-portal.jsonl").read_text().split("\n")
    n = next(i for i, raw in enumerate(lines) if '"id": "portal:acme"' in raw)
    lines[n] = lines[n].replace('"id": "portal:acme", ', "")
    f = tmp_path / "missing.jsonl"
    f.write_text("\n".join(lines))
    res = rescind("replay", str(f), "--url", falkordb)
    assert res.returncode == 2 and res.stderr.splitlines() == [f"line {n + 1}: missing field 'id'"]
    early = [raw for raw in (ROOT / "examples/vendor-portal.jsonl").read_text().split("\n")
             if '"op": "retract"' not in raw]  # approve a payment nothing took OUT
    f.write_text("\n".join(early))
    res = rescind("replay", str(f), "--url", falkordb)
    assert res.returncode == 2
    approve = next(i for i, raw in enumerate(early, 1) if '"op": "approve"' in raw)
    assert res.stderr.splitlines() == [f"line {approve}: no recall for 'pay-1041': only "
                                       "executed payments that went OUT have one"]


def test_bad_tenant_name_is_a_clear_error(falkordb):
    """A tenant name that is not [a-z0-9_-]{1,64} is refused before anything happens."""
    res = rescind("replay", "examples/vendor-portal.jsonl", "--tenant", "Bad Name", "--url",
                  falkordb)
    assert res.returncode == 2 and "bad tenant name" in res.stderr


def test_an_unreachable_server_is_a_clear_error():
    """A --url nobody answers on gives a one-line message and exit 2, not a traceback."""
    from rescind.runtime.server import free_port

    res = rescind("replay", "examples/vendor-portal.jsonl", "--url", f"redis://127.0.0.1:{free_port()}")
    assert res.returncode == 2 and "cannot reach FalkorDB" in res.stderr
    assert "Traceback" not in res.stderr


def test_progress_goes_to_stderr_and_json_stays_clean(falkordb, tmp_path):
    """`replay --json` and `asyncapi --json` print only JSON on stdout, whatever progress shows."""
    res = rescind("replay", "examples/vendor-portal.jsonl", "--json", "--url", falkordb)
    assert res.returncode == 0 and json.loads(res.stdout)["held"] == ["pay-1042"]
    res = rescind("asyncapi", "--out", str(tmp_path / "a.json"), "--json")
    assert res.returncode == 0 and json.loads(res.stdout) == {"file": str(tmp_path / "a.json")}
