"""One embedded FalkorDB server per test session; every test gets its own tenant."""

from __future__ import annotations

import itertools
import os

import pytest

from rescind.runtime.server import EmbeddedFalkorDB

_counter = itertools.count()


@pytest.fixture(scope="session")
def falkordb():
    """The embedded server, or the one named by RESCIND_TEST_URL."""
    if os.environ.get("RESCIND_TEST_URL"):
        yield os.environ["RESCIND_TEST_URL"]
        return
    with EmbeddedFalkorDB() as server:
        yield server.url


@pytest.fixture
def tenant_name() -> str:
    return f"t{os.getpid()}-{next(_counter)}"


@pytest.fixture
def graph(falkordb, tenant_name):
    """A fresh tenant graph on the session's server, removed afterwards."""
    from rescind.graph.store import TenantGraph, connect

    g = TenantGraph(connect(falkordb), tenant_name)
    yield g
    g.delete()
