"""A delegating LangGraph store: records reads and writes, hides OUT memories from the agent.

A store memory is identified by its namespace and key: a put that changes what a key holds
supersedes the old value, a delete ends it. Either makes the old version not current, never
OUT: it needs no hiding here, since the store serves only what each key holds now, and it stays
a valid premise of what was built on it. What is served is hidden only when it is OUT (the
status feed). To know what a put replaces, the items it overwrites are read first, in one
extra batch.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from contextlib import nullcontext
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from .context import current_run
from .recorder import Recorder, store_key


def _run() -> str:
    """The context this store operation belongs to: the root run it happens in."""
    try:
        from langgraph.config import get_config

        conf = get_config()
    except RuntimeError:  # outside a graph run
        return current_run()
    return current_run(conf.get("configurable", {}).get("thread_id"))


def _overwritten(ops: list[Any]) -> list[GetOp]:
    return [GetOp(op.namespace, op.key) for op in ops if isinstance(op, PutOp)]


class RecordingStore(BaseStore):
    def __init__(self, inner: BaseStore, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder
        # LangGraph's InMemoryStore is not safe across threads: a search iterates a namespace's
        # dict while a parallel branch's put grows it ("dictionary changed size during
        # iteration", raised in the agent's own call). Wrapped, each put also reads what it
        # replaces first, which widened that window; calls into an in-memory store are made
        # one at a time (the read and the put together). Stores of a database are left as is.
        self._serial = threading.Lock() if isinstance(inner, InMemoryStore) else nullcontext()

    def batch(self, ops: Iterable[Any]) -> list[Any]:
        ops = list(ops)
        reads = _overwritten(ops)
        with self._serial:
            before = self.inner.batch(reads) if reads else []
            results = self.inner.batch(ops)
        return self._after(ops, results, before)

    async def abatch(self, ops: Iterable[Any]) -> list[Any]:
        ops = list(ops)
        reads = _overwritten(ops)
        before = await self.inner.abatch(reads) if reads else []
        return self._after(ops, await self.inner.abatch(ops), before)

    def _after(self, ops: list[Any], results: list[Any], before: list[Any]) -> list[Any]:
        run = _run()
        held = iter(before)
        out = []
        for op, result in zip(ops, results, strict=True):
            if isinstance(op, GetOp) and isinstance(result, Item):
                result = result if self._delivered(run, result) else None
            elif isinstance(op, SearchOp) and isinstance(result, list):
                result = [i for i in result if self._delivered(run, i)]
            elif isinstance(op, PutOp):
                old = next(held)
                old = old.value if isinstance(old, Item) else None
                key = store_key(op.namespace, op.key)
                if op.value is not None:
                    self.recorder.wrote(run, key, op.value, old)
                elif old is not None:
                    self.recorder.deleted(run, key, old)
            out.append(result)
        return out

    def _delivered(self, run: str, item: Item) -> bool:
        return self.recorder.delivered(run, store_key(item.namespace, item.key), item.value,
                                       item.updated_at)
