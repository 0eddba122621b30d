"""Gemini as a chat model of the agents: google-genai function calling, with the conversions
between LangChain messages and Gemini's contents. Needs ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``
and the ``gemini`` extra (``pip install -e '.[gemini]'``)."""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatResult
from pydantic import Field, PrivateAttr, SecretStr

from .chat import SIGNATURES, ToolModel, as_result, call_id

DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"


class GeminiUnavailable(RuntimeError):
    """Gemini cannot be used here: no API key, or the google-genai package is not installed."""


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


class GeminiModel(ToolModel):
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
        return as_result(from_gemini_parts(parts or [], self.key(messages)))
