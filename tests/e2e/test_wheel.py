"""The wheel, as a user gets it: one top-level package, `rescind`, installed into a fresh venv
beside an agent project that has its own `services` and `middleware` packages.

The fresh venv gets the wheel alone (no network: `--no-deps --no-index`); its third-party
dependencies come from this interpreter's site-packages through a .pth file, which Python
appends after the venv's own site-packages and whose own .pth files it does not run (so the
editable install of this checkout cannot stand in for the wheel)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
import redis

from rescind.contract import events as ev
from rescind.contract import layout
from tests.support.paths import ROOT
from tests.support.stream_entries import events_of

# The user's project: an agent whose repository has packages named like Rescind's folders.
USER_FILES = {
    "services/__init__.py": 'OWNER = "the user\'s own services"\n',
    "services/billing.py": "def total(lines):\n    return sum(lines)\n",
    "middleware/__init__.py": 'OWNER = "the user\'s own middleware"\n',
    "agent.py": '''\
"""A small LangGraph agent, wrapped by Rescind: it reads a portal (a source) and saves a note."""

import json
import sys
from typing import Annotated, Any

import middleware
import services
from services.billing import total

import rescind
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.prebuilt import InjectedStore, create_react_agent
from langgraph.store.memory import InMemoryStore
from rescind import InterceptConfig, SourceTool, instrument

url, tenant = sys.argv[1], sys.argv[2]


class Scripted(GenericFakeChatModel):
    def bind_tools(self, tools: Any, **kw: Any) -> "Scripted":
        return self


@tool
def read_vendor_portal(vendor: str) -> str:
    """Read a vendor's web portal page."""
    return "Acme bank account: IBAN GB33 BUKB 2020 1555 5555 55"


@tool
def save_note(text: str, store: Annotated[Any, InjectedStore()]) -> str:
    """Save a note to long-term memory."""
    store.put(("notes",), "acme", {"kind": "belief", "text": text})
    return "saved"


def call(name, args, n):
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call-{n}"}])


model = Scripted(messages=iter([call("read_vendor_portal", {"vendor": "acme"}, 1),
                                call("save_note", {"text": "Acme is paid to GB33"}, 2),
                                AIMessage(content="done")]))
graph = create_react_agent(model, [read_vendor_portal, save_note], store=InMemoryStore())
config = InterceptConfig(tenant=tenant, url=url, sources={
    "read_vendor_portal": SourceTool(source="portal:{vendor}", kind="vendor_portal")})
wrapped = instrument(graph, config)
wrapped.invoke({"messages": [("user", "note acme's account")]},
               {"configurable": {"thread_id": "t1"}})
flushed = wrapped.rescind.publisher.flush(timeout=20)
wrapped.rescind.close()
print(json.dumps({"rescind": rescind.__file__, "flushed": flushed,
                  "services": [services.OWNER, services.__file__, total([1, 2, 3])],
                  "middleware": [middleware.OWNER, middleware.__file__]}))
''',
}


def source_copy(into: Path) -> Path:
    """What the build reads (pyproject, its readme, the folders package-dir maps), copied, so
    that no build/ folder in the checkout can carry stale modules into the wheel."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for name in ("pyproject.toml", conf["project"]["readme"]):
        shutil.copy2(ROOT / name, into / name)
    for folder in set(conf["tool"]["setuptools"]["package-dir"].values()):
        shutil.copytree(ROOT / folder, into / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return into


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from this checkout's sources, without network or build isolation."""
    src = source_copy(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("wheel")
    res = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                          "--no-index", "-q", "-w", str(out), str(src)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    [built] = out.glob("rescind-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding the wheel; third-party packages reached through a .pth file."""
    home = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home)], check=True,
                   timeout=120)
    python = home / "bin" / "python"
    res = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                          "--no-deps", "--no-index", str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stdout + res.stderr
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; "
                                "print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "zz_test_dependencies.pth").write_text("\n".join(sorted(deps)) + "\n")
    return home


def clean_env() -> dict[str, str]:
    """The environment without anything that points Python at this checkout."""
    return {k: v for k, v in os.environ.items()
            if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}}


def test_the_wheel_holds_only_the_rescind_package_and_its_data(wheel):
    """Top level: `rescind` and its dist-info; no tests, services, middleware or agents. The
    console's files and the reference agents' world travel with it."""
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert top == {"rescind", next(t for t in top if t.endswith(".dist-info"))}
    assert {"rescind/__init__.py", "rescind/middleware/__init__.py",
            "rescind/agents/__init__.py", "rescind/contract/events.py",
            "rescind/api/static/index.html", "rescind/agents/world/week.json",
            "rescind/agents/recordings/week.json"} <= set(names)
    assert not any("/tests/" in n or "__pycache__" in n for n in names)


def test_a_wrapped_agent_runs_from_a_user_project_with_its_own_services_and_middleware(
        venv, falkordb, tenant_name, tmp_path):
    """From the user's project, the wheel's rescind (not this checkout) wraps a LangGraph agent;
    the user's `services` and `middleware` still import with their own content, and the
    agent's observation and note reach the event stream of the tenant's partition."""
    project = tmp_path / "project"
    for rel, text in USER_FILES.items():
        (project / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / rel).write_text(text)
    res = subprocess.run([str(venv / "bin" / "python"), "agent.py", falkordb, tenant_name],
                         cwd=project, env=clean_env(), capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    assert Path(seen["rescind"]).is_relative_to(venv), seen["rescind"]
    assert seen["services"] == ["the user's own services", str(project / "services/__init__.py"),
                                6]
    assert seen["middleware"] == ["the user's own middleware",
                                  str(project / "middleware/__init__.py")]
    assert seen["flushed"] is True

    conn = redis.Redis.from_url(falkordb)
    mine = events_of(conn, layout.tenant_stream(tenant_name), tenant_name)
    by_type = {e["type"]: e for e in mine}
    assert {"observation_recorded", "memory_written"} <= set(by_type), mine
    assert by_type["observation_recorded"]["source"] == "portal:acme"
    assert by_type["memory_written"]["text"] == "Acme is paid to GB33"
    portal = ev.memory_id(tenant_name, "observation", by_type["observation_recorded"]["text"])
    assert portal in by_type["memory_written"]["premises"]  # the note rests on what was read


def test_the_rescind_command_of_the_fresh_venv_answers_help(venv, tmp_path):
    """The console script the wheel installs runs from the venv, outside this checkout."""
    res = subprocess.run([str(venv / "bin" / "rescind"), "--help"], cwd=tmp_path,
                         env=clean_env(), capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Usage" in res.stdout and "replay" in res.stdout
