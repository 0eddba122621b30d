"""What is logged when something fails after a batch has already landed."""

import logging

import pytest
import redis

from rescind.graph.store import log_failure


@pytest.mark.parametrize("exc", [redis.ConnectionError("Connection closed by server."),
                                 redis.TimeoutError("Timeout reading from socket"),
                                 ConnectionResetError(104, "reset")])
def test_a_lost_server_is_one_line_without_a_traceback(caplog, exc):
    """The workers' outage handling reports a lost server; a traceback here read as a bug."""
    with caplog.at_level(logging.INFO):
        try:
            raise exc
        except Exception:
            log_failure(logging.getLogger("t"), "a write batch landed, but the read after it failed")
    (record,) = caplog.records
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert "the server went away" in record.getMessage() and str(exc) in record.getMessage()


def test_any_other_failure_keeps_its_traceback(caplog):
    with caplog.at_level(logging.INFO):
        try:
            raise KeyError("id")
        except Exception:
            log_failure(logging.getLogger("t"), "telling of its %d status changes failed", 3)
    (record,) = caplog.records
    assert record.levelno == logging.ERROR and record.exc_info is not None
    assert record.getMessage() == "telling of its 3 status changes failed"
