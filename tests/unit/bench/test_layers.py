"""The benchmarks are a harness: they may import the product, the product never imports them
(the CLI only inside its `bench` commands), and their own modules import one another without a
cycle."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support import sources
from tests.support.paths import ROOT

PACKAGES = {"services": "rescind", "middleware": "rescind.middleware", "agents": "rescind.agents"}


def modules() -> dict[str, Path]:
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join([package, *parts])] = path
    return found


def imports(name: str, path: Path) -> list[tuple[str, bool]]:
    """(module imported, at module level?) for every import in the file, relative ones resolved."""
    tree = sources.tree(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    top = {id(node) for node in tree.body}
    for node in tree.body:  # imports under a module-level `if` or `try` are module level too
        if isinstance(node, ast.If | ast.Try):
            top |= {id(n) for n in ast.walk(node)}
    found = []
    for node, _ in sources.statements(tree):  # imports are statements
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.append((base, id(node) in top))
            found += [(f"{base}.{alias.name}", id(node) in top) for alias in node.names]
    return found


def is_bench(module: str) -> bool:
    return module == "rescind.bench" or module.startswith("rescind.bench.")


def test_the_product_never_imports_the_benchmarks():
    """No module outside rescind.bench imports it, except the CLI inside a command."""
    found = modules()
    assert "rescind.bench.rules" in found and "rescind.engine.retraction" in found
    wrong = []
    for name, path in found.items():
        if is_bench(name):
            continue
        for target, module_level in imports(name, path):
            if is_bench(target) and (module_level or not name.startswith("rescind.cli")):
                wrong.append(f"{name} imports {target}")
    assert wrong == []


def test_the_benchmark_modules_import_one_another_without_a_cycle():
    """The import graph among rescind.bench's modules (lazy imports included) has no cycle."""
    found = modules()
    bench = {name: path for name, path in found.items() if is_bench(name)}
    edges = {name: {t for t, _ in imports(name, path) if t in bench and t != name}
             for name, path in bench.items()}
    assert "rescind.bench.rules_tables" in edges["rescind.bench.rules_report"]
    done: set[str] = set()

    def visit(node: str, trail: list[str]) -> None:
        if node in trail:
            raise AssertionError("import cycle: " + " -> ".join([*trail[trail.index(node):], node]))
        if node in done:
            return
        for nxt in sorted(edges[node]):
            visit(nxt, [*trail, node])
        done.add(node)

    for name in sorted(edges):
        visit(name, [])
