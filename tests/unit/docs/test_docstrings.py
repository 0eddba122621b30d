"""Docstrings say what the code does and why; measured figures live in docs/performance.md."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support import sources
from tests.support.paths import ROOT

# A measured time or size ("430 ms", "87 µs", "160 kB"), or a before and after ("115 -> 50").
FIGURE = re.compile(r"\b\d[\d.,]*\s?(ms|µs|kB|MB|GB)\b|\b\d[\d.,]*\s?(->|→)\s?\d[\d.,]*")
# The harnesses describe the runs they make (a writer "every 2 ms"): their parameters, not history.
HARNESSES = ("bench", "demo")


def figures_in_docstrings(path: Path) -> list[str]:
    """``name: figure`` for each docstring of the module (its own, its classes', its
    functions') that quotes a measured figure."""
    found = []
    tree = sources.tree(path)
    for node in [tree, *(node for node, _ in sources.statements(tree))]:
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = ast.get_docstring(node, clean=False) or ""
            found += [f"{getattr(node, 'name', '<module>')}: {m.group(0)}"
                      for m in FIGURE.finditer(doc)]
    return found


def test_no_docstring_of_the_product_quotes_a_measured_figure():
    """Timing and size history is kept in docs/performance.md ("Figures behind the code"),
    not in the docstrings of services/ and middleware/."""
    modules = [p for p in sorted((ROOT / "services").rglob("*.py"))
               if p.relative_to(ROOT / "services").parts[0] not in HARNESSES]
    modules += sorted((ROOT / "middleware").rglob("*.py"))
    assert len(modules) > 100
    found = {str(p.relative_to(ROOT)): f for p in modules if (f := figures_in_docstrings(p))}
    assert found == {}


def test_the_check_finds_figures_in_every_kind_of_docstring(tmp_path):
    """A module's, a class's and a function's docstring are read; a figure in a comment or in
    code is not a docstring's, and seconds alone (a timeout) are not a figure."""
    path = tmp_path / "m.py"
    path.write_text('"""Took 620 ms, then 430 ms; waits 20 s."""\n\nclass A:\n'
                    '    """From 115 -> 50 per read."""\n\n\ndef f():\n'
                    '    """Median 87 µs."""\n    return 5  # 430 ms\n')
    assert figures_in_docstrings(path) == ["<module>: 620 ms", "<module>: 430 ms",
                                           "A: 115 -> 50", "f: 87 µs"]
