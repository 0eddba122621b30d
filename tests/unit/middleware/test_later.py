"""The recorder's thread (``recorder.Later``): recording steps run after the agent's call, in
order, once a burst has gathered or a drain waits; and the snapshots they are given."""

from __future__ import annotations

import logging
import threading
import time

from rescind.middleware.recorder import Later, snapshot


def test_steps_run_in_order_on_a_thread_of_their_own_after_the_linger():
    """Steps asked for in one burst wait out the linger, then run one after another, in the
    order asked, on the "rescind-recorder" thread, not the caller's."""
    later = Later(linger_s=0.3)
    ran: list[tuple[int, str]] = []
    asked = time.monotonic()
    for i in range(50):
        later(lambda i=i: ran.append((i, threading.current_thread().name)))
    assert ran == []  # nothing runs while the burst gathers
    deadline = time.monotonic() + 10
    while len(ran) < 50 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert time.monotonic() - asked >= 0.3
    assert [i for i, _ in ran] == list(range(50))
    assert {name for _, name in ran} == {"rescind-recorder"}
    later.close()


def test_a_drain_runs_the_burst_at_once_and_returns_when_all_have_run():
    """A drain does not wait out a long linger: it returns once every step asked for before
    it has run, and with nothing asked it returns at once."""
    later = Later(linger_s=30)
    assert later.drain(1)
    ran: list[int] = []
    for i in range(5):
        later(ran.append, i)
    began = time.monotonic()
    assert later.drain(10)
    assert time.monotonic() - began < 5
    assert ran == [0, 1, 2, 3, 4] and later.pending == 0
    later.close()


def test_a_full_batch_is_run_without_waiting_out_the_linger():
    """``batch`` steps waiting end the linger at once."""
    later = Later(linger_s=30, batch=10)
    ran: list[int] = []
    for i in range(10):
        later(ran.append, i)
    deadline = time.monotonic() + 10
    while len(ran) < 10 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ran == list(range(10))
    later.close()


def test_a_step_that_raises_is_logged_and_counted_and_the_next_steps_still_run(caplog):
    """A failing step reaches nobody's call: it is counted in ``failed``, logged with its
    traceback, and the steps after it run."""
    later = Later(linger_s=0)
    ran: list[str] = []

    def broken() -> None:
        raise ValueError("no facts")

    with caplog.at_level(logging.ERROR, logger="rescind.recorder"):
        later(ran.append, "before")
        later(broken)
        later(ran.append, "after")
        assert later.drain(10)
    assert ran == ["before", "after"]
    assert later.failed == 1
    assert any("broken" in r.getMessage() and r.exc_info for r in caplog.records)
    later.close()


def test_a_step_that_drains_does_not_wait_for_itself():
    """A step asking for a drain (a flush inside recording) returns at once, no deadlock."""
    later = Later(linger_s=0)
    answers: list[bool] = []
    later(lambda: answers.append(later.drain(5)))
    assert later.drain(10)
    assert answers == [True]
    later.close()


def test_a_drain_gives_up_at_its_timeout_while_a_step_runs_long():
    """A step that takes longer than the drain's timeout: the drain answers False in time."""
    later = Later(linger_s=0)
    release = threading.Event()
    later(release.wait, 10)
    began = time.monotonic()
    assert not later.drain(0.2)
    assert time.monotonic() - began < 5
    release.set()
    assert later.drain(10)
    later.close()


def test_close_runs_what_waits_then_stops_the_thread():
    """``close`` runs the steps left, then the thread ends."""
    later = Later(linger_s=30)
    ran: list[int] = []
    later(ran.append, 1)
    thread = later._thread
    later.close(10)
    assert ran == [1]
    assert thread is not None and not thread.is_alive()


def test_a_snapshot_is_unchanged_by_what_the_agent_does_to_its_value_afterwards():
    """Dicts, lists and tuples are copied, however nested: changing the original afterwards
    leaves the snapshot as it was; other objects are shared."""
    marker = object()
    value = {"text": "Pay GB33", "tags": ["a", {"deep": [1, 2]}], "pair": ("x", ["y"]),
             "obj": marker}
    taken = snapshot(value)
    value["text"] = "Pay ZZ99"
    value["tags"][1]["deep"].append(3)
    value["pair"][1].append("z")
    value["new"] = 1
    assert taken == {"text": "Pay GB33", "tags": ["a", {"deep": [1, 2]}], "pair": ("x", ["y"]),
                     "obj": marker}
    assert taken["obj"] is marker
    assert snapshot(None) is None and snapshot("s") == "s"


def test_an_idle_thread_sleeps_and_the_next_step_wakes_it():
    """Idle past ``idle_s`` the thread sleeps (no polling); a step asked for then still runs
    after the linger, without anyone draining."""
    later = Later(linger_s=0.02, idle_s=0.05)
    ran: list[int] = []
    later(ran.append, 1)
    deadline = time.monotonic() + 10
    while not (ran and later._asleep) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ran == [1] and later._asleep
    later(ran.append, 2)
    while len(ran) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ran == [1, 2]
    later.close()
