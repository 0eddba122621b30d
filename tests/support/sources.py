"""The product's source, read and parsed once per test process: the scans of the whole source
(the layers, the benchmarks' layers, the docstrings) share one syntax tree per module instead of
each parsing every module again. Nothing here may change a tree it hands out."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path


@cache
def text(path: Path) -> str:
    """The file's text (UTF-8)."""
    return path.read_text(encoding="utf-8")


@cache
def tree(path: Path) -> ast.Module:
    """The file's syntax tree, shared: read it, never change it."""
    return ast.parse(text(path), filename=str(path))
