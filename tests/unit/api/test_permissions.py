"""Every route of the API names a permission and has an example request for the security tests."""

from rescind.api import PERMISSIONS, permission_of
from tests.support.api_examples import EXAMPLES, ROUTES, TENANT_ROUTES, route_id, route_key


def test_every_endpoint_has_an_example_and_a_permission():
    """Each route of the app names a permission, whose roles are those its example expects, and
    has an example request: a new endpoint fails here until the security tests cover it."""
    missing = [route_id(r) for r in ROUTES if route_key(r) not in EXAMPLES]
    unguarded = [route_id(r) for r in ROUTES if permission_of(r) not in PERMISSIONS]
    assert missing == [] and unguarded == []
    wrong = [route_id(r) for r in ROUTES
             if set(PERMISSIONS[permission_of(r)]) != EXAMPLES[route_key(r)]["roles"]]
    assert wrong == []
    assert len(TENANT_ROUTES) == 38
