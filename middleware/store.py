"""A delegating LangGraph store: records reads and writes, hides OUT memories from the agent."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchOp

from .context import current_run
from .recorder import Recorder


def _thread() -> str:
    """The context this store operation belongs to: the root run it happens in."""
    try:
        from langgraph.config import get_config

        conf = get_config()
    except RuntimeError:  # outside a graph run
        return current_run()
    return current_run(conf.get("configurable", {}).get("thread_id"))


class RecordingStore(BaseStore):
    def __init__(self, inner: BaseStore, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def batch(self, ops: Iterable[Any]) -> list[Any]:
        ops = list(ops)
        return self._after(ops, self.inner.batch(ops))

    async def abatch(self, ops: Iterable[Any]) -> list[Any]:
        ops = list(ops)
        return self._after(ops, await self.inner.abatch(ops))

    def _after(self, ops: list[Any], results: list[Any]) -> list[Any]:
        thread = _thread()
        out = []
        for op, result in zip(ops, results, strict=True):
            if isinstance(op, GetOp) and isinstance(result, Item):
                result = result if self.recorder.delivered(thread, result.value) else None
            elif isinstance(op, SearchOp) and isinstance(result, list):
                result = [i for i in result if self.recorder.delivered(thread, i.value)]
            elif isinstance(op, PutOp) and op.value is not None:
                self.recorder.wrote(thread, op.value, "/".join((*op.namespace, op.key)))
            out.append(result)
        return out
