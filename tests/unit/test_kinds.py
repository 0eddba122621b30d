"""The kind of a test follows its folder, and a unit test cannot start a server."""

import pytest

from rescind.runtime.server import EmbeddedFalkorDB


def test_a_unit_test_carries_the_unit_marker_and_no_other_kind(request):
    """tests/conftest.py marks by folder, so `pytest -m unit` selects this file."""
    kinds = {m.name for m in request.node.iter_markers()} & {"unit", "integration", "e2e"}
    assert kinds == {"unit"}


def test_starting_the_embedded_server_in_a_unit_test_fails_at_once():
    """The guard of tests/unit/conftest.py: no FalkorDB process is started."""
    server = EmbeddedFalkorDB()
    with pytest.raises(RuntimeError, match="is a unit test: it may not start FalkorDB"):
        server.start()
    assert server.process is None
