"""A fuzz run of the API from its own OpenAPI document (schemathesis): whatever is sent, to any
endpoint, with a token allowed there, the answer is never a server error."""

from __future__ import annotations

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode

from rescind.api import api_routes
from rescind.contract import layout
from rescind.graph.store import TenantGraph, connect
from rescind.transport import connection
from tests.support.api import forget, make_story

# Each operation gets this many generated requests (kept small: the suite's time budget).
EXAMPLES = int(os.environ.get("RESCIND_FUZZ_EXAMPLES", "12"))
ROLE_OF = {"read": "viewer", "decide": "security", "approve": "finance", "send": "agent",
           "gate": "agent", "audit": "security", "admin": "admin", "whoami": "viewer"}


@pytest.fixture(scope="module")
def fuzzed(falkordb):
    name = f"fuzz{os.getpid()}"
    story = make_story(falkordb, name)
    conn = connection.connect(falkordb)
    before = set(conn.hkeys(layout.TENANTS))
    yield story
    forget(falkordb, name)
    for new in set(conn.hkeys(layout.TENANTS)) - before:  # made by POST /tenants
        forget(falkordb, new.decode())
    TenantGraph(connect(falkordb), name).delete()


@pytest.fixture(scope="module")
def api_schema(fuzzed):
    return schemathesis.openapi.from_asgi("/api/openapi.json", fuzzed.client.app)


OPERATIONS = sorted((m, r.path) for r in api_routes() for m in r.methods)


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
                         ids=["valid", "invalid"])
@pytest.mark.parametrize("method, path", OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_no_generated_request_gets_a_server_error(method, path, mode, fuzzed, api_schema):
    """Requests generated from the operation's schema (valid ones, and ones that break it), sent
    to the story's tenant with a token of a role the operation allows: every answer is below
    500."""
    operation = api_schema[path][method]
    permission = operation.definition.raw["x-rescind-permission"]
    headers = fuzzed.as_(ROLE_OF[permission])
    fixed = {"tenant": fuzzed.tenant} if "{tenant}" in path else None

    @given(case=operation.as_strategy(mode, path_parameters=fixed))
    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink])
    def run(case) -> None:
        response = case.call(headers=headers)
        assert response.status_code < 500, (case.method, case.formatted_path, case.body,
                                             response.text[:500])

    run()
