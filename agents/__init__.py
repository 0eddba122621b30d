"""The reference agents: an accounts-payable agent, a confirmer and a payments agent.

LangGraph graphs over a fictional week (``agents.world``), driven by Gemini, a recorded replay of
model calls, or a deterministic policy (``agents.llm``). They know nothing of Rescind: wrap the
compiled graphs from outside (``run_week(..., wrap=...)``).
"""

from .ap import build_ap_agent, build_confirmer
from .llm import (
    GeminiModel,
    GeminiUnavailable,
    PolicyModel,
    RecordingMiss,
    RecordingModel,
    ReplayModel,
    chat_model,
    request_key,
)
from .payments import build_payments_agent
from .week import (
    WEEK,
    Step,
    StepResult,
    WeekResult,
    build_agents,
    forget_attacker_notes,
    record_week,
    run_week,
)
from .world import World

__all__ = [
    "WEEK",
    "GeminiModel",
    "GeminiUnavailable",
    "PolicyModel",
    "RecordingMiss",
    "RecordingModel",
    "ReplayModel",
    "Step",
    "StepResult",
    "WeekResult",
    "World",
    "build_agents",
    "build_ap_agent",
    "build_confirmer",
    "build_payments_agent",
    "chat_model",
    "forget_attacker_notes",
    "record_week",
    "request_key",
    "run_week",
]
