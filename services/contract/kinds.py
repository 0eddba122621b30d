"""What a memory can be, and whether it stands: defined once, for events, engine, API and CLI.

Both are ``StrEnum``s, so a member equals its text ("belief", "IN") wherever a string is read
or stored, and the pydantic ``Literal`` aliases below keep the event and API schemas as plain
string enums.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal


class MemoryKind(StrEnum):
    OBSERVATION = "observation"  # what a source tool returned, grounded in that source
    BELIEF = "belief"            # a fact an agent saved
    PLAN = "plan"                # what an agent means to do
    ANSWER = "answer"            # what an agent told a person
    ACTION = "action"            # a payment or other consequential call, proposed or executed


class MemoryStatus(StrEnum):
    IN = "IN"    # in service: it has a valid grounding or a justification whose premises are IN
    OUT = "OUT"  # out of service: retracted, withdrawn, or resting only on what is OUT


IN, OUT = MemoryStatus.IN, MemoryStatus.OUT

# Every kind, in the order the API and console show them.
KINDS: tuple[MemoryKind, ...] = (MemoryKind.OBSERVATION, MemoryKind.BELIEF, MemoryKind.PLAN,
                                 MemoryKind.ACTION, MemoryKind.ANSWER)
# What an agent writes to its store (observations and actions are recorded from tool calls).
WRITTEN_KINDS: tuple[MemoryKind, ...] = (MemoryKind.BELIEF, MemoryKind.PLAN, MemoryKind.ANSWER)

AnyKind = Literal[MemoryKind.OBSERVATION, MemoryKind.BELIEF, MemoryKind.PLAN, MemoryKind.ACTION,
                  MemoryKind.ANSWER]
WrittenKind = Literal[MemoryKind.BELIEF, MemoryKind.PLAN, MemoryKind.ANSWER]
StatusName = Literal[MemoryStatus.IN, MemoryStatus.OUT]

__all__ = ["IN", "KINDS", "OUT", "WRITTEN_KINDS", "AnyKind", "MemoryKind", "MemoryStatus",
           "StatusName", "WrittenKind"]
