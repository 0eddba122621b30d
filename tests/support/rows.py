"""Checks a row of a ``WriteBatch`` or ``Mutation`` against the ``TypedDict`` its list declares
(``rescind.core.shapes``)."""

from __future__ import annotations

import dataclasses
import typing


def row_types(cls: type) -> dict[str, type]:
    """Each list field of the dataclass ``cls`` and the ``TypedDict`` of its rows."""
    hints = typing.get_type_hints(cls)
    return {f.name: typing.get_args(hints[f.name])[0] for f in dataclasses.fields(cls)
            if typing.get_origin(hints[f.name]) is list}


def misfits(shape: object) -> list[str]:
    """What in ``shape``'s rows its row types do not declare, or a required field missing."""
    out = []
    for name, tp in row_types(type(shape)).items():
        declared = typing.get_type_hints(tp).keys()
        for row in getattr(shape, name):
            if extra := sorted(row.keys() - declared):
                out.append(f"{name}: undeclared {extra} in {row}")
            if missing := sorted(tp.__required_keys__ - row.keys()):
                out.append(f"{name}: missing {missing} in {row}")
    return out
