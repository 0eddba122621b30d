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
