"""Recordings of model calls: ``ReplayModel`` answers from one and nothing else,
``RecordingModel`` calls another model and stores each request's answer (format: ``agents.llm``)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import PrivateAttr

from .chat import ToolModel, as_result, describe_last, from_record, to_record, tool_spec

RECORDING = Path(__file__).with_name("recordings") / "week.json"


class RecordingMiss(LookupError):
    """The recording has no answer for this request: it was made from a different run."""

    def __init__(self, key: str, last: str, path: Path | None = None) -> None:
        self.key, self.last = key, last
        where = f" in {path}" if path else ""
        super().__init__(f"no recorded model call{where} for request {key} (last message: {last}); "
                         "the run differs from the recorded one - remake the recording "
                         "(`rescind record`)")


def load_recording(path: Path) -> dict:
    if not path.exists():
        return {"meta": {}, "calls": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("calls"), dict):
        raise ValueError(f"{path} is not a recording: expected {{'meta': ..., 'calls': {{...}}}}")
    return data


def save_recording(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    os.replace(tmp, path)


class ReplayModel(ToolModel):
    """Answers from a recording, never anything else: a request not in it raises RecordingMiss."""

    path: Path = RECORDING
    _calls: dict = PrivateAttr(default_factory=dict)
    _meta: dict = PrivateAttr(default_factory=dict)

    def __init__(self, path: str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(path=Path(path or RECORDING), **kwargs)
        if not self.path.exists():
            raise FileNotFoundError(f"no recording at {self.path}")
        data = load_recording(self.path)
        self._calls, self._meta = data["calls"], data.get("meta", {})

    @property
    def _llm_type(self) -> str:
        return "replay"

    @property
    def meta(self) -> dict:
        return dict(self._meta)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        key = self.key(messages)
        if key not in self._calls:
            raise RecordingMiss(key, describe_last(messages), self.path)
        return as_result(from_record(self._calls[key]))


class RecordingModel(ToolModel):
    """Calls ``inner`` and merges each request key and answer into the recording at ``path``.

    A request already in the recording gets the recorded answer without calling ``inner``, so a
    recording stays one answer per request even when the model is not deterministic.
    ``fresh=True`` starts the file anew; otherwise calls are added to what is there, which must
    have been made with the same kind of model (``meta.made_with``).
    """

    inner: BaseChatModel
    path: Path = RECORDING
    note: str | None = None

    def __init__(self, inner: BaseChatModel, path: str | Path | None = None, *, fresh: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(inner=inner, path=Path(path or RECORDING), **kwargs)
        self._start(fresh)  # bind_tools copies without calling __init__: this runs once

    @property
    def _llm_type(self) -> str:
        return "recording"

    @property
    def made_with(self) -> str:
        return getattr(self.inner, "made_with", type(self.inner).__name__)

    def _start(self, fresh: bool) -> None:
        data = {"meta": {}, "calls": {}} if fresh else load_recording(self.path)
        had = data["meta"].get("made_with")
        if had and had != self.made_with:
            raise ValueError(f"{self.path} was made with {had}, not {self.made_with}: "
                             "record with fresh=True to start it anew")
        data["meta"] = {**data["meta"], **self._meta()}
        save_recording(self.path, data)

    def _meta(self) -> dict:
        extra = {"note": self.note} if self.note else {}
        return {**extra, "made_with": self.made_with, "format": 1,
                "key": "sha256 of the canonical JSON of a request: each message's type and content, "
                       "tool calls (name, args, id), tool_call_id; the bound tools' names and "
                       "parameter schemas (agents/llm.py)"}

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None,
                   **kwargs: Any) -> RecordingModel:
        return self.model_copy(update={"tool_specs": [tool_spec(t) for t in tools],
                                       "inner": self.inner.bind_tools(tools, **kwargs)})

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        key = self.key(messages)
        data = load_recording(self.path)
        if key in data["calls"]:
            return as_result(from_record(data["calls"][key]))
        inner = self.inner
        if isinstance(inner, BaseChatModel):
            message = inner._generate(messages, stop=stop).generations[0].message
        else:  # a binding from a foreign model: no callbacks, so the model input is seen once
            message = inner.invoke(messages, config={"callbacks": []})
        if not isinstance(message, AIMessage):
            raise TypeError(f"{self.made_with} answered with {type(message).__name__}, not an AIMessage")
        data["calls"][key] = {**to_record(message), "after": describe_last(messages)}
        data["meta"] = {**data.get("meta", {}), **self._meta()}
        save_recording(self.path, data)
        return as_result(message)
