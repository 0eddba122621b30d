"""Every route of the API is a job of the table (rescind.api.jobs.JOBS), names its permission and
has an example request for the security tests; every job answers a typed model."""

import typing

from pydantic import BaseModel

from rescind.api import PERMISSIONS, permission_of
from rescind.api.jobs import BY_NAME, JOBS
from tests.support.api_examples import EXAMPLES, ROUTES, TENANT, route_id, route_key


def test_every_endpoint_has_an_example_and_a_permission():
    """Each route of the app names a permission, whose roles are those its example expects, and
    has an example request: a new endpoint fails here until the security tests cover it."""
    missing = [route_id(r) for r in ROUTES if route_key(r) not in EXAMPLES]
    unguarded = [route_id(r) for r in ROUTES if permission_of(r) not in PERMISSIONS]
    assert missing == [] and unguarded == []
    wrong = [route_id(r) for r in ROUTES
             if set(PERMISSIONS[permission_of(r)]) != EXAMPLES[route_key(r)]["roles"]]
    assert wrong == []


def test_the_routes_are_the_table_of_jobs():
    """The app's routes are exactly the jobs served over HTTP, each guarded by its job's
    permission (none hand-written beside the table, none of the table left out)."""
    routes = {(m, r.path): permission_of(r) for r in ROUTES for m in r.methods}
    table = {(j.method, "/api/v1" + j.path): j.permission for j in JOBS if j.http}
    assert routes == table
    tenant_jobs = [j for j in JOBS if j.http and ("/api/v1" + j.path).startswith(TENANT)]
    assert len([r for r in ROUTES if r.path.startswith(TENANT)]) == len(tenant_jobs)


def _model(answer) -> type | None:
    if typing.get_origin(answer) is list:
        [answer] = typing.get_args(answer)
    return answer if isinstance(answer, type) and issubclass(answer, BaseModel) else None


def test_every_job_answers_a_typed_model_not_a_dict():
    """Each job's answer is a pydantic model or a list of one: no route or tool answers an
    untyped dict."""
    assert [j.name for j in JOBS if _model(j.answer) is None] == []


# Free-form by design: an audit entry's detail differs by action (counts, amounts, why).
_FREE_FORM = {("AuditEntry", "detail")}


def _untyped(annotation) -> bool:
    """Whether ``annotation`` holds Any, or a dict of Any, at any depth."""
    if annotation is typing.Any:
        return True
    return any(_untyped(a) for a in typing.get_args(annotation))


def test_no_answer_nests_an_untyped_dict():
    """Every field of every answer model, reached from the jobs' answers, is typed down to
    its leaves (a tree, a history row, a kept reason), so the OpenAPI document describes the
    whole answer; only the fields named in _FREE_FORM are free-form."""
    seen: dict[str, type[BaseModel]] = {}

    def walk(model: type[BaseModel]) -> None:
        if model.__name__ in seen:
            return
        seen[model.__name__] = model
        for name, field in model.model_fields.items():
            for sub in _models(field.annotation):
                walk(sub)

    for j in JOBS:
        if (m := _model(j.answer)) is not None:
            walk(m)
    untyped = sorted((m.__name__, n) for m in seen.values()
                     for n, f in m.model_fields.items() if _untyped(f.annotation))
    assert untyped == sorted(_FREE_FORM)
    assert {"TreeNode", "StatusChange", "Kept", "KeptReason", "GateLogRow"} <= seen.keys()


def _models(annotation) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for a in typing.get_args(annotation) for m in _models(a)]


def test_each_preview_names_its_commit_with_the_same_permission_and_rev():
    """A preview names the job that commits it: the same permission and path without
    /preview, and a body of the same fields plus the revision to commit at."""
    previews = [j for j in JOBS if j.commit is not None]
    assert {j.name for j in previews} == {"preview_retraction", "preview_reinstatement",
                                          "preview_withdrawal", "preview_correction"}
    for p in previews:
        c = BY_NAME[p.commit]
        assert (c.permission, c.method, c.path) == (p.permission, p.method,
                                                    p.path.removesuffix("/preview"))
        assert set(c.body.model_fields) >= set(p.body.model_fields) | {"rev"}
        assert p.audit is not None and c.audit is not None
