"""Rescind: justification tracking and retraction for multi-agent systems, on FalkorDB.

The public face, for the process that runs the agents::

    from rescind import InterceptConfig, instrument
    graph = instrument(compiled_graph, InterceptConfig.load("rescind.toml"))

Everything else (the engine, the workers, the API, the CLI) is reached through the `rescind`
command or its own subpackage; importing this package loads only the interception layer.
"""

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

__all__ = ["ActionTool", "ConfigWarning", "GateRefused", "InterceptConfig", "Recorder", "RecordingStore",
           "RescindCallbacks", "SourceTool", "UserSource", "instrument"]
