"""The import contract: layers as folders, each importing only the layers below it.

Computed with `ast` over the folders that pyproject's package-dir maps into `rescind` (so the
test sees the installed names, not the folder names, and needs no install). Every import counts,
also the ones inside functions, since those run too; the syntax tree also tells an import inside
a function from one at module level, which the rule for the harnesses needs.

Top to bottom (``|``: siblings, which may not import each other):

    cli > bench > demo > views > api | scenario > workers > operator > engine > graph
        > core | runtime | middleware > transport > contract

- rescind.middleware runs inside agent processes: it imports only rescind.contract and
  rescind.transport (reaching the server);
- rescind.core is pure: it imports only rescind.contract (no I/O, so not rescind.transport);
- the package root (the public face) imports only rescind.middleware and rescind.contract;
- rescind.agents (the reference agents) imports nothing of rescind, and only the harnesses and
  the CLI (cli, demo, bench) import it;
- the harnesses are reached only from above and only inside functions: rescind.bench by
  rescind.cli's commands, rescind.demo by those and by the benchmark (whose demo scenario is
  the demo week itself).

What the tree breaks today and someone is removing is listed in KNOWN_*, one line of reason
each: a new violation fails, and so does an entry that no longer occurs (delete it), so the lists
only shrink.
"""

from __future__ import annotations

import ast
import tomllib
import warnings
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import sources
from tests.support.paths import ROOT

ROOT_PACKAGE = "rescind"
RANK = {"cli": 11, "bench": 10, "demo": 9, "views": 8, "api": 7, "scenario": 7, "workers": 6,
        "operator": 5, "engine": 4, "graph": 3, "core": 2, "runtime": 2, "middleware": 2,
        "transport": 1, "contract": 0}
HARNESSES = {"demo", "bench"}
MAX_LINES = 400  # past this a module is worth a look (a warning): split along seams, not to fit
HARD_LINES = 800  # past this it holds more than one concept: the test fails

# Known violations, as "importer -> imported", each with why it is still here and who removes it.
# Empty today; an entry is a debt with its reason, and the test fails once it is paid.
KNOWN_UPWARD: dict[str, str] = {}
KNOWN_MODULE_CYCLES: dict[tuple[str, ...], str] = {}
KNOWN_PACKAGE_CYCLES: dict[tuple[str, ...], str] = {}
KNOWN_LONG: dict[str, str] = {}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int
    in_function: bool

    def __str__(self) -> str:
        where = " (inside a function)" if self.in_function else ""
        return f"{self.importer} -> {self.imported} (line {self.line}){where}"

    @property
    def key(self) -> str:
        return f"{self.importer} -> {self.imported}"


def package_dirs(root: Path = ROOT) -> dict[str, Path]:
    """Package name -> folder, as pyproject's [tool.setuptools] package-dir maps them."""
    conf = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    return {name: root / folder for name, folder in conf["package-dir"].items()}


def modules(dirs: dict[str, Path]) -> dict[str, Path]:
    """Every module under the mapped folders, by its installed name. A folder mapped to a
    package of its own is left to that mapping."""
    claimed = {d.resolve() for d in dirs.values()}
    found: dict[str, Path] = {}
    for package, folder in dirs.items():
        for path in sorted(folder.rglob("*.py")):
            rel = path.relative_to(folder)
            if any((folder / Path(*rel.parts[:i])).resolve() in claimed
                   for i in range(1, len(rel.parts))):
                continue
            parts = [*package.split("."), *rel.with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The most specific known module a dotted name falls in."""
    parts = name.split(".")
    while parts:
        if ".".join(parts) in known:
            return ".".join(parts)
        parts.pop()
    return None


def imports(known: dict[str, Path]) -> list[Import]:
    """Every import of one known module by another, at any depth of the code."""
    found: list[Import] = []
    for name, path in known.items():
        is_package = path.name == "__init__.py"
        # imports are statements: the walk skips the expressions (a lambda holds no import)
        for node, in_function in sources.statements(sources.tree(path)):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    package = name.split(".") if is_package else name.split(".")[:-1]
                    package = package[:len(package) - node.level + 1]
                    base = ".".join([*package, *([base] if base else [])])
                # `from a import b` imports the module a.b when there is one, else a's name b
                targets = [f"{base}.{alias.name}" for alias in node.names]
            for target in targets:
                resolved = _resolve(target, known)
                if resolved and resolved != name:
                    found.append(Import(name, resolved, node.lineno, in_function))
    return sorted(found, key=lambda i: (i.importer, i.line, i.imported))


def unit_of(module: str) -> str:
    """The top-level subpackage a module belongs to; "" for the package root itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def cycles(edges: dict[str, set[str]]) -> dict[tuple[str, ...], list[str]]:
    """Each strongly connected group of more than one node (or a node importing itself), by its
    sorted members, with one cycle through it from its smallest name."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[set[str]] = []
    counter = 0

    def visit(v: str) -> None:  # Tarjan; the graphs here are a few hundred nodes deep at most
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1 or v in edges.get(v, ()):
                groups.append(group)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return {tuple(sorted(g)): _cycle_through(sorted(g), edges) for g in sorted(groups, key=min)}


def _cycle_through(group: list[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest path from the group's first node back to itself, inside the group."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(edges.get(v, set()) & members):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    return group  # unreachable for a strongly connected group


def broken_rules(found: list[Import]) -> list[Import]:
    """Imports between top-level subpackages that the layer rule forbids."""
    bad = []
    for imp in found:
        src, dst = unit_of(imp.importer), unit_of(imp.imported)
        if src == dst:
            continue
        if dst == "agents":
            ok = src in {"cli", "demo", "bench"}
        elif src == "agents":
            ok = False
        elif src == "":
            ok = dst in {"middleware", "contract"}
        elif src == "middleware":
            ok = dst in {"contract", "transport"}
        elif src == "core":  # pure: names and shapes, never the Redis I/O below it
            ok = dst == "contract"
        elif dst in HARNESSES:  # only the layer above reaches a harness, and only when run
            ok = src in RANK and RANK[src] > RANK[dst] and src in {"cli", "bench"} \
                and imp.in_function
        elif dst == "":
            ok = False  # the package root is the agents' face, not a layer to build on
        else:
            ok = src in RANK and dst in RANK and RANK[dst] < RANK[src]
        if not ok:
            bad.append(imp)
    return bad


def long_modules(known: dict[str, Path], limit: int = MAX_LINES) -> dict[str, int]:
    sizes = {name: len(sources.text(path).splitlines()) for name, path in known.items()}
    return {name: n for name, n in sorted(sizes.items()) if n > limit}


def module_graph(found: list[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in found:
        edges[imp.importer].add(imp.imported)
    return edges


def package_graph(found: list[Import]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in found:
        src, dst = unit_of(imp.importer), unit_of(imp.imported)
        if src != dst:
            edges[src or ROOT_PACKAGE].add(dst or ROOT_PACKAGE)
    return edges


def _compare(found: dict, known: dict, what: str) -> None:
    new = {k: v for k, v in found.items() if k not in known}
    gone = [k for k in known if k not in found]
    lines = [f"new {what}: {v}" for v in new.values()]
    lines += [f"no longer occurs, delete it from the known list: {k}" for k in gone]
    assert not lines, "\n".join(lines)


# -- the real tree ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def tree() -> tuple[dict[str, Path], list[Import]]:
    known = modules(package_dirs())
    return known, imports(known)


def test_the_mapping_is_read_and_the_graph_is_not_empty(tree):
    """The three folders are seen under their installed names, with their imports (a scan that
    saw nothing would pass every test below)."""
    known, found = tree
    assert {"rescind", "rescind.middleware", "rescind.agents", "rescind.contract.events",
            "rescind.cli.main"} <= set(known)
    assert not any(n.startswith(("services", "middleware", "agents")) for n in known)
    assert len(found) > 100
    assert any(i.importer == "rescind" and i.imported.startswith("rescind.middleware")
               for i in found)


def test_every_package_folder_is_installed():
    """Each folder with an __init__.py under the mapped folders is in pyproject's package list
    (setuptools cannot find packages across a renaming package-dir, so a missing one would be
    left out of the wheel)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    known = modules(package_dirs())
    packages = {n for n, p in known.items() if p.name == "__init__.py"}
    # Folders of data only are listed too, with their files (setuptools warns of any folder
    # it is not given that it "would be ignored").
    data = set(setuptools["package-data"]) - packages
    assert packages | data == listed
    for name in data:
        top, _, rest = name.removeprefix("rescind.").partition(".")
        folder = {"middleware": ROOT / "middleware", "agents": ROOT / "agents"}.get(
            top, ROOT / "services" / top) / rest.replace(".", "/")
        assert folder.is_dir() and not list(folder.glob("*.py")), name


def test_no_import_cycle_between_modules(tree):
    """No module reaches itself through imports, at module level or inside functions."""
    _, found = tree
    found_cycles = {k: " -> ".join(c) for k, c in cycles(module_graph(found)).items()}
    _compare(found_cycles, KNOWN_MODULE_CYCLES, "import cycle")


def test_no_import_cycle_between_subpackages(tree):
    """No top-level subpackage reaches itself through another."""
    _, found = tree
    found_cycles = {k: " -> ".join(c) for k, c in cycles(package_graph(found)).items()}
    _compare(found_cycles, KNOWN_PACKAGE_CYCLES, "cycle between subpackages")


def test_no_import_runs_upward_or_sideways(tree):
    """Every import between subpackages goes down the layers; the middleware imports only the
    contract and the transport, the core only the contract, the agents nothing, and the
    harnesses are imported by the CLI's commands alone."""
    _, found = tree
    bad: dict[str, str] = {}
    for imp in broken_rules(found):
        bad.setdefault(imp.key, str(imp))
    _compare(bad, KNOWN_UPWARD, "import against the layer rule")


def test_no_module_over_800_lines_and_a_warning_past_400():
    """A module longer than 800 lines is split (or listed, with who splits it); one past 400
    is named in a warning: modules are split along seams, not to fit a line count."""
    known = modules(package_dirs())
    found = {name: f"{name}: {n} lines" for name, n in long_modules(known, HARD_LINES).items()}
    _compare(found, KNOWN_LONG, f"module over {HARD_LINES} lines")
    long = long_modules(known)
    if long:
        warnings.warn(f"{len(long)} module(s) over {MAX_LINES} lines (look for a seam): "
                      + ", ".join(f"{name} ({n})" for name, n in long.items()), stacklevel=1)


# -- the checker itself, on a small tree made for it ----------------------------------------

def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def toy(tmp_path) -> tuple[dict[str, Path], list[Import]]:
    _write(tmp_path, {
        "pyproject.toml": '[tool.setuptools]\npackage-dir = {"rescind" = "src", '
                          '"rescind.middleware" = "mw", "rescind.agents" = "ag"}\n',
        "src/__init__.py": "from rescind.middleware import thing\n",
        "src/contract/__init__.py": "",
        "src/contract/events.py": "",
        "src/core/__init__.py": "",
        "src/core/a.py": "from . import b\n",
        "src/core/b.py": "def f():\n    from rescind.core import a\n",
        "src/graph/__init__.py": "",
        "src/graph/store.py": "from rescind.engine.plan import Plan\n",
        "src/engine/__init__.py": "",
        "src/engine/plan.py": "from ..graph import store\nfrom rescind.contract.events import E\n",
        "src/demo/__init__.py": "",
        "src/cli/__init__.py": "import rescind.demo\n\ndef run():\n    from rescind import demo\n",
        "mw/__init__.py": "from .thing import x\n",
        "mw/thing.py": "from rescind.contract import events\nfrom rescind.core import a\n"
                       "from rescind.transport import connection\n",
        "src/transport/__init__.py": "",
        "src/transport/connection.py": "from rescind.contract import events\n",
        "src/core/c.py": "from rescind.transport import connection\n",
        "src/core/d.py": "try:\n    import json\nexcept ImportError:\n    from rescind.core import a\n"
                         "match 1:\n    case 1:\n        from rescind.core import c\n",
        "ag/__init__.py": "import rescind.contract.events\n",
        "src/big.py": "x = 1\n" * 401,
    })
    known = modules(package_dirs(tmp_path))
    return known, imports(known)


def test_the_checker_names_installed_modules_and_resolves_relative_imports(toy):
    known, found = toy
    assert {"rescind", "rescind.middleware", "rescind.middleware.thing", "rescind.agents",
            "rescind.core.a", "rescind.big"} <= set(known)
    keys = {i.key for i in found}
    assert {"rescind.core.a -> rescind.core.b", "rescind.engine.plan -> rescind.graph.store",
            "rescind.middleware -> rescind.middleware.thing",
            "rescind.engine.plan -> rescind.contract.events",
            "rescind.core.d -> rescind.core.a", "rescind.core.d -> rescind.core.c"} <= keys
    [inner] = [i for i in found if i.importer == "rescind.core.b"]
    assert inner.in_function and inner.imported == "rescind.core.a"


def test_the_checker_finds_cycles_inside_functions_and_between_packages(toy):
    _, found = toy
    assert list(cycles(module_graph(found)).values()) == [
        ["rescind.core.a", "rescind.core.b", "rescind.core.a"],
        ["rescind.engine.plan", "rescind.graph.store", "rescind.engine.plan"]]
    assert cycles(package_graph(found)) == {("engine", "graph"): ["engine", "graph", "engine"]}


def test_the_checker_finds_every_kind_of_forbidden_import(toy):
    _, found = toy
    assert sorted(str(i) for i in broken_rules(found)) == [
        "rescind.agents -> rescind.contract.events (line 1)",  # the agents import nothing
        "rescind.cli -> rescind.demo (line 1)",  # a harness, at module level
        "rescind.core.c -> rescind.transport.connection (line 1)",  # the core is pure
        "rescind.graph.store -> rescind.engine.plan (line 1)",  # upward
        "rescind.middleware.thing -> rescind.core.a (line 2)",  # middleware beyond contract
    ]
    assert long_modules(toy[0]) == {"rescind.big": 401}
