"""The HTTP endpoints, made from the table of jobs (``rescind.api.jobs.JOBS``): one route per job,
guarded by its permission (its Guard; the OpenAPI document names it as ``x-rescind-permission``
with the roles), its answer the job's response model."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Response

from rescind.api.auth import PERMISSIONS, Principal
from rescind.api.jobs import JOBS, Call, Job, Param, perform
from rescind.api.state import Api, Guard, get_api

router = APIRouter(prefix="/api/v1")

Tenant = Annotated[str, Path(pattern=r"^[a-z0-9_-]{1,64}$", description="Tenant name")]
_KW = inspect.Parameter.KEYWORD_ONLY


def _annotation(p: Param) -> Any:
    where = Path if p.where == "path" else Query
    return Annotated[p.type, where(description=p.description, **p.limits)]


def endpoint(job: Job):
    """The route's function: its signature (what FastAPI reads) is the job's tenant, path and
    query parameters, body, the Guard of its permission, the shared state and the response."""

    def answer(*, me: Principal, api: Api, response: Response, tenant: str | None = None,
               body: Any = None, **args: Any) -> Any:
        out = perform(Call(job, me, api, tenant, "api", args, body, response))
        if job.files is None:
            return out
        file = out["file"]
        return Response(file["content"], media_type=file["media_type"], headers={
            "Content-Disposition": f'attachment; filename="{file["filename"]}"'})

    params = [inspect.Parameter("tenant", _KW, annotation=Tenant)] if "{tenant}" in job.path \
        else []
    params += [inspect.Parameter(p.name, _KW, annotation=_annotation(p), default=p.default)
               for p in job.params]
    if job.body is not None:
        params.append(inspect.Parameter(
            "body", _KW, annotation=job.body | None if job.body_optional else job.body,
            default=None if job.body_optional else inspect.Parameter.empty))
    params += [inspect.Parameter("me", _KW, annotation=Annotated[
                   Principal, Depends(Guard(job.permission))]),
               inspect.Parameter("api", _KW, annotation=Annotated[Api, Depends(get_api)]),
               inspect.Parameter("response", _KW, annotation=Response)]
    answer.__signature__ = inspect.Signature(params)
    answer.__name__ = answer.__qualname__ = job.name
    answer.__doc__ = job.doc or None
    return answer


def _add(job: Job) -> None:
    files = {} if job.files is None else {
        "response_class": Response, "response_model": None,
        "responses": {200: {"content": {t: {"schema": {"type": "string"}} for t in job.files},
                            "description": "The file: " + ", or ".join(job.files.values())}}}
    router.add_api_route(
        job.path, endpoint(job), methods=[job.method], tags=[job.tag], summary=job.summary,
        status_code=job.status, response_model_exclude_unset=True,
        openapi_extra={"x-rescind-permission": job.permission,
                       "x-rescind-roles": list(PERMISSIONS[job.permission])},
        **({"response_model": job.answer, "responses": job.responses or {}} | files))


for _job in JOBS:
    if _job.http:
        _add(_job)
