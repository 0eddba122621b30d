"""Chat models for the agents: Gemini, a recorded replay of model calls, and a deterministic policy.

All are LangChain ``BaseChatModel`` subclasses, so callbacks see every model input
(``on_chat_model_start``), and all support ``bind_tools``.

- ``PolicyModel``: the rules of ``agents.policy``; no network, no key.
- ``ReplayModel(path)``: answers from a recording; a request not in it raises ``RecordingMiss``.
- ``GeminiModel``: google-genai function calling; needs ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``
  and the ``gemini`` extra (``pip install -e '.[gemini]'``).
- ``RecordingModel(inner, path)``: calls ``inner`` and stores each request and its answer.
- ``chat_model(mode, recording)``: one of them by name.

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

import base64
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr, SecretStr

from . import policy

RECORDING = Path(__file__).with_name("recordings") / "week.json"
DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"
SIGNATURES = "gemini_thought_signatures"  # additional_kwargs key: tool-call id -> base64 signature


class RecordingMiss(LookupError):
    """The recording has no answer for this request: it was made from a different run."""

    def __init__(self, key: str, last: str, path: Path | None = None) -> None:
        self.key, self.last = key, last
        where = f" in {path}" if path else ""
        super().__init__(f"no recorded model call{where} for request {key} (last message: {last}); "
                         "the run differs from the recorded one - remake the recording "
                         "(`rescind record`)")


class GeminiUnavailable(RuntimeError):
    """Gemini cannot be used here: no API key, or the google-genai package is not installed."""


# requests, keys and tool-call ids

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
    return f"call-{key[:12]}-{n}"


def describe_last(messages: Sequence[BaseMessage], limit: int = 160) -> str:
    if not messages:
        return "(none)"
    last = messages[-1]
    text = last.content if isinstance(last.content, str) else json.dumps(last.content, default=str)
    if isinstance(last, AIMessage) and last.tool_calls:
        text += " " + json.dumps([[c["name"], c["args"]] for c in last.tool_calls], default=str)
    text = " ".join(text.split())
    return f"{last.type}: {text[:limit]}{'...' if len(text) > limit else ''}"


def _response(message: AIMessage) -> dict:
    out = {"content": message.content,
           "tool_calls": [{"name": c["name"], "args": c["args"], "id": c.get("id")}
                          for c in message.tool_calls]}
    if signatures := message.additional_kwargs.get(SIGNATURES):
        out[SIGNATURES] = signatures  # Gemini wants them back with the calls; not part of any key
    return out


def _message(response: dict) -> AIMessage:
    extra = {SIGNATURES: response[SIGNATURES]} if response.get(SIGNATURES) else {}
    return AIMessage(content=response.get("content", ""), additional_kwargs=extra,
                     tool_calls=[{"name": c["name"], "args": c.get("args") or {}, "id": c["id"],
                                  "type": "tool_call"} for c in response.get("tool_calls", [])])


def _result(message: AIMessage) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=message)])


class _ToolModel(BaseChatModel):
    """A chat model that remembers the tools bound to it (``bind_tools`` returns a copy)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool_specs: list[dict] = Field(default_factory=list, repr=False)

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: str | None = None,
                   **kwargs: Any) -> _ToolModel:
        return self.model_copy(update={"tool_specs": [tool_spec(t) for t in tools]})

    @property
    def tool_names(self) -> list[str]:
        return [t["name"] for t in self.tool_specs]

    @property
    def made_with(self) -> str:
        return self._llm_type

    def key(self, messages: Sequence[BaseMessage]) -> str:
        return request_key(messages, self.tool_specs)


class PolicyModel(_ToolModel):
    """The deterministic policy of ``agents.policy`` as a chat model."""

    reckless: bool = False

    @property
    def _llm_type(self) -> str:
        return "policy"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        move = policy.decide(messages, self.tool_names, reckless=self.reckless)
        if isinstance(move, policy.Answer):
            return _result(AIMessage(content=move.text))
        key = self.key(messages)
        return _result(AIMessage(content="", tool_calls=[
            {"name": c.name, "args": c.args, "id": call_id(key, n), "type": "tool_call"}
            for n, c in enumerate(move)]))


# recordings

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


class ReplayModel(_ToolModel):
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
        return _result(_message(self._calls[key]))


class RecordingModel(_ToolModel):
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
            return _result(_message(data["calls"][key]))
        inner = self.inner
        if isinstance(inner, BaseChatModel):
            message = inner._generate(messages, stop=stop).generations[0].message
        else:  # a binding from a foreign model: no callbacks, so the model input is seen once
            message = inner.invoke(messages, config={"callbacks": []})
        if not isinstance(message, AIMessage):
            raise TypeError(f"{self.made_with} answered with {type(message).__name__}, not an AIMessage")
        data["calls"][key] = {**_response(message), "after": describe_last(messages)}
        data["meta"] = {**data.get("meta", {}), **self._meta()}
        save_recording(self.path, data)
        return _result(message)


# Gemini

def gemini_key() -> str | None:
    return os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY") or None


def _get(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(p if isinstance(p, str) else str(p.get("text", "")) for p in content or [])


def to_gemini_contents(messages: Sequence[BaseMessage]) -> tuple[str | None, list[dict]]:
    """(system instruction, contents) for google-genai, as plain dicts the SDK accepts.

    Tool calls become ``function_call`` parts of a ``model`` turn, tool results
    ``function_response`` parts of a ``user`` turn (consecutive ones together, as Gemini wants);
    a thought signature Gemini attached to a call goes back with it.
    """
    system: list[str] = []
    contents: list[dict] = []
    names: dict[str, str] = {}

    def add(role: str, parts: list[dict]) -> None:
        if not parts:
            return
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})

    for message in messages:
        text = _content_text(message.content)
        if isinstance(message, SystemMessage):
            system.append(text)
        elif isinstance(message, AIMessage):
            signatures = message.additional_kwargs.get(SIGNATURES, {})
            parts: list[dict] = [{"text": text}] if text else []
            for call in message.tool_calls:
                names[call.get("id") or ""] = call["name"]
                part: dict[str, Any] = {"function_call": {"name": call["name"], "args": call["args"]}}
                if call.get("id") in signatures:
                    part["thought_signature"] = base64.b64decode(signatures[call["id"]])
                parts.append(part)
            add("model", parts)
        elif isinstance(message, ToolMessage):
            name = message.name or names.get(message.tool_call_id, "tool")
            answer = {"error": text} if message.status == "error" else {"result": text}
            add("user", [{"function_response": {"name": name, "response": answer}}])
        elif isinstance(message, HumanMessage):
            add("user", [{"text": text}])
        else:
            raise ValueError(f"cannot send a {message.type} message to Gemini")
    return ("\n\n".join(system) or None), contents


def from_gemini_parts(parts: Sequence[Any], key: str) -> AIMessage:
    """An AIMessage from the parts of a Gemini answer (SDK objects or dicts); thoughts dropped."""
    texts: list[str] = []
    calls: list[dict] = []
    signatures: dict[str, str] = {}
    for part in parts or []:
        if _get(part, "thought"):
            continue
        if (fc := _get(part, "function_call")) is not None:
            cid = call_id(key, len(calls))
            calls.append({"name": _get(fc, "name"), "args": dict(_get(fc, "args") or {}), "id": cid,
                          "type": "tool_call"})
            if sig := _get(part, "thought_signature"):
                signatures[cid] = base64.b64encode(sig).decode("ascii")
        elif text := _get(part, "text"):
            texts.append(text)
    extra = {SIGNATURES: signatures} if signatures else {}
    return AIMessage(content="".join(texts), tool_calls=calls, additional_kwargs=extra)


class GeminiModel(_ToolModel):
    """Gemini through google-genai function calling (automatic function calling off)."""

    model_name: str = Field(default_factory=lambda: os.environ.get("GEMINI_MODEL", DEFAULT_GEMINI_MODEL))
    api_key: SecretStr | None = Field(default=None, repr=False)
    temperature: float = 0.0
    _client: Any = PrivateAttr(default=None)

    def model_post_init(self, context: Any) -> None:
        if self.api_key is None:
            key = gemini_key()
            if not key:
                raise GeminiUnavailable("set GOOGLE_API_KEY or GEMINI_API_KEY to use Gemini "
                                        "(offline, use the replay or policy model)")
            self.api_key = SecretStr(key)

    @property
    def _llm_type(self) -> str:
        return "gemini"

    @property
    def made_with(self) -> str:
        return f"gemini:{self.model_name}"

    def _genai(self) -> tuple[Any, Any]:
        try:
            from google import genai
            from google.genai import types
        except ImportError as exc:
            raise GeminiUnavailable("the google-genai package is not installed: "
                                    "pip install -e '.[gemini]'") from exc
        if self._client is None:
            self._client = genai.Client(api_key=self.api_key.get_secret_value())
        return self._client, types

    def _config(self, types: Any, system: str | None) -> Any:
        declarations = [types.FunctionDeclaration(name=t["name"], description=t["description"],
                                                  parameters_json_schema=t["parameters"])
                        for t in self.tool_specs]
        return types.GenerateContentConfig(
            system_instruction=system,
            tools=[types.Tool(function_declarations=declarations)] if declarations else None,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            temperature=self.temperature)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        client, types = self._genai()
        system, contents = to_gemini_contents(messages)
        response = client.models.generate_content(model=self.model_name, contents=contents,
                                                  config=self._config(types, system))
        if not response.candidates:
            raise RuntimeError(f"Gemini gave no answer (prompt feedback: {response.prompt_feedback})")
        parts = _get(_get(response.candidates[0], "content"), "parts")
        return _result(from_gemini_parts(parts or [], self.key(messages)))


# the factory

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
