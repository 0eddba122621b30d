"""RESCIND_REPLICA_WAIT_MS: a bad value is refused where it is read, naming it."""

import pytest

from rescind.transport import connection


@pytest.mark.parametrize("raw", ["abc", "-5", "1.5", ""])
def test_a_bad_replica_wait_is_refused_naming_the_setting(monkeypatch, raw):
    monkeypatch.setenv("RESCIND_REPLICA_WAIT_MS", raw)
    with pytest.raises(ValueError, match="RESCIND_REPLICA_WAIT_MS must be a whole number"):
        connection.replica_wait_ms()


def test_the_agents_publisher_refuses_it_before_it_starts_sending(monkeypatch, tmp_path):
    from rescind.middleware.publisher import Publisher

    monkeypatch.setenv("RESCIND_REPLICA_WAIT_MS", "soon")
    with pytest.raises(ValueError, match="not 'soon'"):
        Publisher("redis://127.0.0.1:1", spool_dir=tmp_path)


def test_zero_turns_the_wait_off_and_the_default_is_two_seconds(monkeypatch):
    monkeypatch.setenv("RESCIND_REPLICA_WAIT_MS", "0")
    assert connection.replica_wait_ms() == 0
    assert connection.replicated(object(), "rescind:{acme}") is True  # no server asked
    monkeypatch.delenv("RESCIND_REPLICA_WAIT_MS")
    assert connection.replica_wait_ms() == 2000
