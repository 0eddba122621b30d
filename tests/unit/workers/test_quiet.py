"""What FastStream logs while FalkorDB is away is said once by the Link: its reports of a lost
connection and of handlers cancelled when the subscribers were stopped are dropped; any
other error is kept."""

from __future__ import annotations

import asyncio
import logging
import sys

import pytest
import redis

from rescind.workers.link import quiet


def record_of(exc: BaseException) -> logging.LogRecord:
    try:
        raise exc
    except BaseException:  # noqa: BLE001 - the record carries it
        info = sys.exc_info()
    return logging.LogRecord("faststream", logging.ERROR, __file__, 1, "handler failed", None, info)


@pytest.mark.parametrize("exc", [redis.ConnectionError("refused"), asyncio.CancelledError(),
                                 redis.TimeoutError("slow")])
def test_an_outage_s_noise_is_dropped(exc):
    assert quiet(record_of(exc)) is False


@pytest.mark.parametrize("exc", [ValueError("a bug"), redis.ResponseError("syntax")])
def test_other_errors_are_kept(exc):
    assert quiet(record_of(exc)) is True
    assert quiet(logging.LogRecord("x", logging.INFO, __file__, 1, "plain", None, None)) is True
