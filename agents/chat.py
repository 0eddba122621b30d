"""What every chat model of the agents shares: the key of a request, tool-call ids made from it,
and a base model that remembers the tools bound to it (see ``agents.llm`` for how a request is
keyed and why)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

SIGNATURES = "gemini_thought_signatures"  # additional_kwargs key: tool-call id -> base64 signature


def tool_spec(tool: Any) -> dict:
    """name, description and JSON-schema parameters of a tool (injected arguments left out)."""
    fn = convert_to_openai_tool(tool)["function"]
    return {"name": fn["name"], "description": fn.get("description", ""),
            "parameters": fn.get("parameters") or {"type": "object", "properties": {}}}


def _canonical(message: BaseMessage) -> dict:
    out: dict[str, Any] = {"type": message.type, "content": message.content}
    if isinstance(message, AIMessage) and message.tool_calls:
        out["tool_calls"] = [{"name": c["name"], "args": c["args"], "id": c.get("id")}
                             for c in message.tool_calls]
    if isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
    return out


def request_key(messages: Sequence[BaseMessage], tools: Sequence[dict]) -> str:
    """The SHA-256 of the canonical JSON of a model request."""
    request = {"messages": [_canonical(m) for m in messages],
               "tools": sorted(({"name": t["name"], "parameters": t["parameters"]} for t in tools),
                               key=lambda t: t["name"])}
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def call_id(key: str, n: int) -> str:
    """The id of the ``n``-th tool call answering the request keyed ``key``."""
    return f"call-{key[:12]}-{n}"


def describe_last(messages: Sequence[BaseMessage], limit: int = 160) -> str:
    """The last message of a request in one short line, to say which request was not found."""
    if not messages:
        return "(none)"
    last = messages[-1]
    text = last.content if isinstance(last.content, str) else json.dumps(last.content, default=str)
    if isinstance(last, AIMessage) and last.tool_calls:
        text += " " + json.dumps([[c["name"], c["args"]] for c in last.tool_calls], default=str)
    text = " ".join(text.split())
    return f"{last.type}: {text[:limit]}{'...' if len(text) > limit else ''}"


def to_record(message: AIMessage) -> dict:
    """An answer as a recording stores it."""
    out = {"content": message.content,
           "tool_calls": [{"name": c["name"], "args": c["args"], "id": c.get("id")}
                          for c in message.tool_calls]}
    if signatures := message.additional_kwargs.get(SIGNATURES):
        out[SIGNATURES] = signatures  # Gemini wants them back with the calls; not part of any key
    return out


def from_record(response: dict) -> AIMessage:
    """A recorded answer as the message the model gives."""
    extra = {SIGNATURES: response[SIGNATURES]} if response.get(SIGNATURES) else {}
    return AIMessage(content=response.get("content", ""), additional_kwargs=extra,
                     tool_calls=[{"name": c["name"], "args": c.get("args") or {}, "id": c["id"],
                                  "type": "tool_call"} for c in response.get("tool_calls", [])])


def as_result(message: AIMessage) -> ChatResult:
    """One message as what ``BaseChatModel._generate`` returns."""
    return ChatResult(generations=[ChatGeneration(message=message)])


class ToolModel(BaseChatModel):
    """A chat model that remembers the tools bound to it (``bind_tools`` returns a copy)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool_specs: list[dict] = Field(default_factory=list, repr=False)

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None,
                   **kwargs: Any) -> ToolModel:
        return self.model_copy(update={"tool_specs": [tool_spec(t) for t in tools]})

    @property
    def tool_names(self) -> list[str]:
        return [t["name"] for t in self.tool_specs]

    @property
    def made_with(self) -> str:
        return self._llm_type

    def key(self, messages: Sequence[BaseMessage]) -> str:
        return request_key(messages, self.tool_specs)
