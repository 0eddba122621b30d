"""A command's --json that does an API job is that job's answer: validated against the job's
model and serialised as its route does (rescind.cli.common.answer)."""

import ast
import json

import pytest
from pydantic import ValidationError

from rescind.api.jobs import BY_NAME
from rescind.cli.common import answer, emit
from tests.support.paths import ROOT


def test_an_answer_is_typed_by_the_job_s_model_and_keeps_only_the_fields_given():
    """Fields are coerced as the model types them (an amount a float), extra fields kept,
    a field the job did not give is not added (the route's exclude_unset)."""
    row = {"id": "act-1", "fragility": "2", "would_fake_it": ["d1"], "domains": ["d1", "d2"],
           "amount": 5, "extra": "kept"}
    out = answer("fragility", row)
    assert out == {**row, "fragility": 2, "amount": 5.0}
    assert isinstance(out["amount"], float) and "name" not in out
    assert answer("recall_list", [{"action": "act-1", "state": "drafted"}]) == [
        {"action": "act-1", "state": "drafted"}]


def test_emit_prints_the_job_s_answer_with_json_and_the_data_as_it_is_without_a_job(capsys):
    """--json of a command that names its job prints the answer (typed); one without, the data."""
    row = {"id": "act-1", "fragility": 1, "would_fake_it": [], "domains": [], "amount": 5}
    emit(row, True, None, "fragility")
    printed = capsys.readouterr().out
    assert '"amount": 5.0' in printed and json.loads(printed)["fragility"] == 1
    emit(row, True, None)
    assert '"amount": 5\n' in capsys.readouterr().out
    with pytest.raises(ValidationError):
        emit({"id": "act-1"}, True, None, "fragility")


def test_an_answer_missing_a_field_its_model_requires_is_refused():
    """A command whose data no longer fits the API's answer fails instead of printing it."""
    with pytest.raises(ValidationError):
        answer("fragility", {"id": "act-1", "would_fake_it": [], "domains": []})
    with pytest.raises(ValidationError):
        answer("gate_log", [{"action": "act-1", "reason": "ok"}])


JOB_ARG = {"emit": 3, "_show": 6, "_deliver": 4, "answer": 0}  # where each takes the job


def _names(node) -> list:
    if isinstance(node, ast.IfExp):
        return _names(node.body) + _names(node.orelse)
    return [node.value if isinstance(node, ast.Constant) else ast.unparse(node)]


def test_every_job_a_command_names_for_its_json_is_a_job_of_the_api():
    """The job given to emit, _show, _deliver and answer in rescind.cli is one of JOBS."""
    named = []
    for path in (ROOT / "services/cli").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            at = JOB_ARG.get(getattr(node, "func", None) and getattr(node.func, "id", None))
            if not isinstance(node, ast.Call) or at is None:
                continue
            arg = node.args[at] if len(node.args) > at else next(
                (k.value for k in node.keywords if k.arg == "job"), None)
            if arg is not None and not (isinstance(arg, ast.Name) and arg.id == "job"):
                named += [(path.name, n) for n in _names(arg)]
    assert [n for n in named if n[1] not in BY_NAME] == []
    assert {"fragility", "audit_order", "recall_list", "recall", "gate_log", "memories",
            "preview_retraction", "commit_retraction", "approve_recall", "export_recall",
            "tenants", "audit_log"} <= {n for _, n in named}
