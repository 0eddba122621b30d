"""Memory identity and times: defined by the event contract, used here as they are there."""

from rescind.contract.events import EPOCH, action_id, from_micros, memory_id, normalise, to_micros

__all__ = ["EPOCH", "action_id", "from_micros", "memory_id", "normalise", "to_micros"]
