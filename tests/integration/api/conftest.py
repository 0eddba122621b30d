"""The API tests' story: the vendor-portal story in a tenant of the test's own, with a token of
every role, removed afterwards."""

from __future__ import annotations

import pytest

from tests.support.api import forget, make_story


@pytest.fixture
def story(falkordb, tenant_name):
    s = make_story(falkordb, tenant_name)
    yield s
    forget(falkordb, tenant_name)
