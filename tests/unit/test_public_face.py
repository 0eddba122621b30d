"""The public face: what `from rescind import ...` offers, and that importing it stays light
(it runs inside the agents' own processes)."""

from __future__ import annotations

import json
import subprocess
import sys

import rescind
import rescind.middleware

PUBLIC = ["ActionTool", "ConfigWarning", "GateRefused", "InterceptConfig", "Recorder", "RecordingStore",
          "RescindCallbacks", "SourceTool", "UserSource", "instrument"]

# Server-side libraries and layers an agent process must not load by importing rescind.
HEAVY = ["fastapi", "starlette", "uvicorn", "falkordb", "faststream", "mcp", "typer"]


def test_all_is_exactly_the_public_face():
    """A name added to or dropped from `rescind.__all__` is a decision: change this list too."""
    assert rescind.__all__ == PUBLIC


def test_every_public_name_resolves_to_the_middleware_s_own_object():
    """Each name is there and is the interception layer's object, not a copy."""
    for name in PUBLIC:
        assert getattr(rescind, name) is getattr(rescind.middleware, name), name
    star: dict = {}
    exec("from rescind import *", star)
    assert sorted(k for k in star if not k.startswith("__")) == sorted(PUBLIC)


def test_importing_rescind_loads_no_server_side_code(tmp_path):
    """In a fresh interpreter, `import rescind` and a public name load only the middleware, the
    contract and the transport's connection of rescind, and none of FastAPI, FalkorDB,
    FastStream, the MCP server or the CLI."""
    code = "import json, sys, rescind; rescind.instrument; print(json.dumps(sorted(sys.modules)))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert res.returncode == 0, res.stderr
    loaded = json.loads(res.stdout)
    ours = {m for m in loaded if m == "rescind" or m.startswith("rescind.")}
    assert "rescind.middleware" in ours
    assert {m for m in ours if m != "rescind"
            and not m.startswith(("rescind.middleware", "rescind.contract"))
            and m not in {"rescind.transport", "rescind.transport.connection"}} == set()
    assert not any(m.startswith("rescind.engine") for m in loaded)
    assert [m for m in loaded if m.split(".")[0] in HEAVY] == []


def test_importing_the_package_alone_loads_no_interception_layer(tmp_path):
    """`import rescind` alone (as every `rescind` command does, for its subpackages) loads
    neither the middleware nor LangChain: they are imported on a public name's first use."""
    code = "import json, sys, rescind; print(json.dumps(sorted(sys.modules)))"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert res.returncode == 0, res.stderr
    loaded = json.loads(res.stdout)
    assert not [m for m in loaded if m.startswith(("rescind.middleware", "langchain"))]
