"""docs/architecture.md's code map names every module of the product, and its error tree every
error of rescind.contract.errors under its parent: adding a module or an error without saying
where it goes in the map fails here, with the line to add."""

from __future__ import annotations

import fnmatch
import inspect
import re
from pathlib import Path

from rescind.contract import errors
from tests.support.paths import ROOT

DOC = ROOT / "docs" / "architecture.md"
MAPPED = ("services", "middleware")  # the folders whose every module the map must name
ROW = re.compile(r"^\| `([^`]+)` \|[^|]*\|(.*)\|\s*$", re.M)
MODULE = re.compile(r"`([\w*]+\.py)`")
FOLDER = re.compile(r"`([\w]+)/`")


def _section(title: str) -> str:
    """The text of a section of the page, from its heading to the next heading of any level."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n{title}\n")
    end = re.compile(r"^#{1,6} ", re.M).search(text, start + len(title) + 2)
    return text[start:end.start() if end else len(text)]


def _rows() -> dict[str, str]:
    """The code map's rows: folder (``services/graph/``) -> what it holds."""
    return dict(ROW.findall(_section("## Code map")))


def _folders() -> dict[str, list[Path]]:
    """Each folder of the product with Python modules -> its modules and subfolders (besides
    ``__init__.py`` and caches)."""
    found: dict[str, list[Path]] = {}
    for top in MAPPED:
        for init in sorted((ROOT / top).rglob("__init__.py")):
            folder = init.parent
            if folder == ROOT / "services":  # its row is services/__init__.py itself
                continue
            found[folder.relative_to(ROOT).as_posix() + "/"] = sorted(
                p for p in folder.iterdir()
                if p.name != "__init__.py" and p.name != "__pycache__"
                and (p.suffix == ".py" or p.is_dir()))
    return found


def test_the_code_map_names_every_module_of_the_product():
    """Every module and subfolder under services/ and middleware/ is named (`name.py`, or a
    `pattern*.py`; `sub/`) in its folder's row, and every module a row names exists."""
    rows, problems = _rows(), []
    for folder, entries in _folders().items():
        if folder not in rows:
            problems.append(f"add a row for `{folder}`: | `{folder}` | `rescind.…` | what each "
                            f"of {', '.join(p.name for p in entries)} holds |")
            continue
        named = MODULE.findall(rows[folder])
        subfolders = set(FOLDER.findall(rows[folder]))
        for p in entries:
            if p.is_dir():
                if p.name not in subfolders and not (p / "__init__.py").exists():
                    problems.append(f"in the row of `{folder}`, say what `{p.name}/` holds")
            elif not any(fnmatch.fnmatchcase(p.name, n) for n in named):
                problems.append(f"in the row of `{folder}`, add `{p.name}` and what it holds")
        for n in named:
            if not any(fnmatch.fnmatchcase(p.name, n) for p in entries if p.suffix == ".py"):
                problems.append(f"in the row of `{folder}`, `{n}` names no module: remove it")
    assert not problems, "docs/architecture.md, section Code map:\n" + "\n".join(problems)


def _tree() -> list[tuple[int, str]]:
    """The error tree's lines as (depth, class name)."""
    block = re.search(r"```\n(.*?)```", _section("### Errors"), re.S).group(1)
    return [((len(line) - len(line.lstrip())) // 2, line.split()[0])
            for line in block.splitlines() if line.strip()]


def _parents(tree: list[tuple[int, str]]) -> dict[str, str | None]:
    """Each name of the tree -> the name it is drawn under."""
    parents, stack = {}, []
    for depth, name in tree:
        del stack[depth:]
        parents[name] = stack[-1] if stack else None
        stack.append(name)
    return parents


def test_the_error_tree_draws_every_error_under_its_parent():
    """Every class of rescind.contract.errors appears in the tree, indented under the error it
    subclasses; the tree names no class that is not there."""
    classes = {name: cls for name, cls in inspect.getmembers(errors, inspect.isclass)
               if issubclass(cls, errors.RescindError) and cls.__module__ == errors.__name__}
    drawn, problems = _parents(_tree()), []
    for name, cls in classes.items():
        base = next((b.__name__ for b in cls.__bases__ if issubclass(b, errors.RescindError)),
                    None)
        if name not in drawn:
            where = f"under `{base}`, indented two spaces more" if base else "at the top"
            doc = (inspect.getdoc(cls) or "").split("\n")[0]
            problems.append(f"add `{name}` {where}: {doc}")
        elif drawn[name] != base:
            problems.append(f"move `{name}` under `{base}` (it is drawn under `{drawn[name]}`)")
    problems += [f"`{name}` is no class of rescind.contract.errors: remove it"
                 for name in drawn if name not in classes]
    assert not problems, "docs/architecture.md, section Errors:\n" + "\n".join(problems)


def test_the_checks_find_what_is_missing():
    """The checks themselves: a row without a module's name, or a tree without a class, is
    reported (so an empty map or tree cannot pass by matching nothing)."""
    rows = _rows()
    assert "services/graph/" in rows and "middleware/" in rows and len(rows) >= 14
    assert any(p.name == "store.py" for p in _folders()["services/graph/"])
    assert MODULE.findall(rows["services/graph/"])
    tree = _parents(_tree())
    assert tree["RescindError"] is None and tree["StalePreview"] == "Conflict"
