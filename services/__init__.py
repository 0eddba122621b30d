"""Rescind: justification tracking and retraction for multi-agent systems, on FalkorDB.

The public face, for the process that runs the agents::

    from rescind import InterceptConfig, instrument
    graph = instrument(compiled_graph, InterceptConfig.load("rescind.toml"))

Everything else (the engine, the workers, the API, the CLI) is reached through the `rescind`
command or its own subpackage. The interception layer (LangChain and all) is imported on the
first use of one of these names, not by importing the package: `rescind.cli` and the services
never pay for it (it would be most of a command's start-up: docs/performance.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["ActionTool", "ConfigWarning", "GateRefused", "InterceptConfig", "Recorder", "RecordingStore",
           "RescindCallbacks", "SourceTool", "UserSource", "instrument"]

if TYPE_CHECKING:
    from rescind.middleware import (
        ActionTool,
        ConfigWarning,
        GateRefused,
        InterceptConfig,
        Recorder,
        RecordingStore,
        RescindCallbacks,
        SourceTool,
        UserSource,
        instrument,
    )


def __getattr__(name: str):
    """The public names, from ``rescind.middleware`` on first use (PEP 562)."""
    if name in __all__:
        import rescind.middleware as middleware

        value = getattr(middleware, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rescind' has no attribute {name!r}")
