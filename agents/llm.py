"""Chat models for the agents: Gemini, a recorded replay of model calls, and a deterministic policy.

All are LangChain ``BaseChatModel`` subclasses, so callbacks see every model input
(``on_chat_model_start``), and all support ``bind_tools``.

- ``PolicyModel``: the rules of ``agents.policy``; no network, no key.
- ``ReplayModel(path)``: answers from a recording; a request not in it raises ``RecordingMiss``.
- ``GeminiModel``: google-genai function calling; needs ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``
  and the ``gemini`` extra (``pip install -e '.[gemini]'``).
- ``RecordingModel(inner, path)``: calls ``inner`` and stores each request and its answer.
- ``chat_model(mode, recording)``: one of them by name.

This module is the one to import. The policy model and the factory live here; the request keys
and the base the models share in ``chat``, the recordings in ``recording``, Gemini in ``gemini``.

A request is keyed by the SHA-256 of a canonical JSON of what the model is asked: each message's
type and content, the tool calls of AI messages (name, arguments, id), the tool-call id of tool
messages, and the bound tools' names and parameter schemas. Tool-call ids are made from that key,
``call-<first 12 hex of the key>-<n>``, so a run with the same inputs makes the same ids and the
same next requests: a recording replays exactly.

The committed recording ``agents/recordings/week.json`` holds the week as ``rescind demo`` runs
it, wrapped by Rescind (whose extra tools and filtered memory change the requests). It was made
with ``rescind record --policy`` from the deterministic policy, because no Gemini key exists on
the machine that made it; ``rescind record`` with a key remakes it from Gemini, and its
``meta.made_with`` then says ``gemini:<model>``. Anything that changes a request changes its key:
other prompts, world data or tools, so record again after such a change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult

from . import policy
from .chat import SIGNATURES, ToolModel, as_result, call_id, describe_last, request_key, tool_spec
from .gemini import (
    DEFAULT_GEMINI_MODEL,
    GeminiModel,
    GeminiUnavailable,
    from_gemini_parts,
    gemini_key,
    to_gemini_contents,
)
from .recording import (
    RECORDING,
    RecordingMiss,
    RecordingModel,
    ReplayModel,
    load_recording,
    save_recording,
)

__all__ = [
    "DEFAULT_GEMINI_MODEL",
    "MODES",
    "RECORDING",
    "SIGNATURES",
    "GeminiModel",
    "GeminiUnavailable",
    "PolicyModel",
    "RecordingMiss",
    "RecordingModel",
    "ReplayModel",
    "call_id",
    "chat_model",
    "describe_last",
    "from_gemini_parts",
    "gemini_key",
    "load_recording",
    "request_key",
    "save_recording",
    "to_gemini_contents",
    "tool_spec",
]


class PolicyModel(ToolModel):
    """The deterministic policy of ``agents.policy`` as a chat model."""

    reckless: bool = False

    @property
    def _llm_type(self) -> str:
        return "policy"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        move = policy.decide(messages, self.tool_names, reckless=self.reckless)
        if isinstance(move, policy.Answer):
            return as_result(AIMessage(content=move.text))
        key = self.key(messages)
        return as_result(AIMessage(content="", tool_calls=[
            {"name": c.name, "args": c.args, "id": call_id(key, n), "type": "tool_call"}
            for n, c in enumerate(move)]))


MODES = ("gemini", "replay", "policy")


def chat_model(mode: str | None = None, recording: Path | None = None) -> BaseChatModel:
    """The agents' chat model: ``gemini``, ``replay`` (of ``recording``) or ``policy``.

    Default: Gemini when GOOGLE_API_KEY or GEMINI_API_KEY is set, else the replay.
    """
    mode = mode or ("gemini" if gemini_key() else "replay")
    if mode == "gemini":
        return GeminiModel()
    if mode == "replay":
        return ReplayModel(recording or RECORDING)
    if mode == "policy":
        return PolicyModel()
    raise ValueError(f"unknown model mode {mode!r}; one of {', '.join(MODES)}")
