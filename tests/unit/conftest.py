"""Unit tests start no server: asking for the session's FalkorDB fails at collection (see
tests/conftest.py), and starting an embedded one fails the test here."""

from __future__ import annotations

import pytest

from rescind.runtime.server import EmbeddedFalkorDB


@pytest.fixture(autouse=True)
def _no_server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """Starting the embedded server from a unit test raises at once."""

    def refuse(self, *args, **kwargs):
        raise RuntimeError(f"{request.node.nodeid} is a unit test: it may not start FalkorDB")

    monkeypatch.setattr(EmbeddedFalkorDB, "start", refuse)
