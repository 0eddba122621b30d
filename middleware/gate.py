"""The fail-closed gate check an action tool goes through before it runs.

A GateAsked event goes to the gate stream; the gate worker answers on a reply list. No answer in
time, or no Redis, means the action does not run.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import redis

from rescind.contract import layout
from rescind.contract.errors import GateRefused
from rescind.contract.events import GateAnswered, GateAsked
from rescind.transport import connection

# How much longer than its own deadline an asker waits for the answer: an answer the gate
# gave before the deadline is still on its way (the gate records any later one as expired).
GRACE_S = 0.5


class GateClient:
    def __init__(self, url: str, tenant: str, timeout_s: float = 5.0) -> None:
        self.tenant, self.timeout_s = tenant, timeout_s
        self._conn = connection.connect(url, socket_connect_timeout=1,
                                          socket_timeout=timeout_s + GRACE_S + 1)

    def ask(self, action: str, premises: list[str], amount: float | None,
            payee: str | None, traceparent: str | None = None, proposed: bool = False,
            at: datetime | None = None, account: str | None = None,
            currency: str | None = None, seen: dict[str, str] | None = None,
            amount_free: bool = False,
            alternatives: list[list[str]] | None = None) -> GateAnswered:
        """The gate's answer; GateRefused when it refuses or cannot be reached.

        ``proposed``: the action was proposed earlier and is judged by its stored facts.
        ``seen``: what the asker published before asking (``Publisher.sent_through``): the gate
        judges once the writer has applied it. ``amount_free``: the operator declared the
        action amount-free (without it, a call with no amount is refused). ``alternatives``:
        every justification the call was proposed with, when it has more than one
        (``premises`` is the first).

        The question says when this asker stops waiting (``expires``, ``timeout_s`` from now);
        judged later, the gate records it as expired, never allowed. The answer is awaited a
        little longer (``GRACE_S``), so that one judged in time is not lost on its way back."""
        reply_to = layout.gate_reply_key(uuid.uuid4().hex)
        asked = GateAsked(event_id=uuid.uuid4().hex, tenant=self.tenant,
                          at=at or datetime.now(UTC), action=action,
                          premises=premises or ["none"], amount=amount, payee=payee,
                          account=account, currency=currency, reply_to=reply_to,
                          traceparent=traceparent, proposed=proposed, seen=seen or None,
                          amount_free=amount_free, alternatives=alternatives,
                          expires=datetime.now(UTC) + timedelta(seconds=self.timeout_s))
        try:
            self._conn.xadd(layout.GATE, layout.encode(asked.model_dump_json(by_alias=True)))
            got = self._conn.blpop([reply_to], timeout=self.timeout_s + GRACE_S)
        except redis.RedisError as exc:
            raise GateRefused(f"the gate could not be asked ({exc}); {action} does not run") \
                from exc
        if got is None:
            raise GateRefused(f"the gate did not answer in {self.timeout_s}s; {action} does not "
                              "run")
        answer = GateAnswered.model_validate_json(got[1])
        if not answer.allowed:
            raise GateRefused(f"the gate refused {action}: {answer.reason}")
        return answer
