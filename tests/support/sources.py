"""The product's source, read and parsed once per test process: the scans of the whole source
(the layers, the benchmarks' layers, the docstrings) share one syntax tree per module instead of
each parsing every module again. Nothing here may change a tree it hands out."""

from __future__ import annotations

import ast
from collections import deque
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


@cache
def statements(tree: ast.AST) -> list[tuple[ast.stmt, bool]]:
    """Every statement of the tree at any depth, with whether it is inside a function: import
    statements (and docstrings' owners) are statements, so the expressions, most of a tree, are
    never visited. In the order of ``ast.walk``; computed once per tree."""
    found: list[tuple[ast.stmt, bool]] = []
    todo: deque[tuple[ast.AST, bool]] = deque([(tree, False)])
    while todo:
        node, in_function = todo.popleft()
        if isinstance(node, ast.stmt):
            found.append((node, in_function))
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for _, value in ast.iter_fields(node):
            if isinstance(value, list):
                todo.extend((child, inner) for child in value
                             if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case))
    return found
