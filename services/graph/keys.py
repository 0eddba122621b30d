"""The values FalkorDB's indexes and unique constraints hold: made by Rescind, never typed.

FalkorDB 4.16.3's C engine crashes the whole server (SIGSEGV in ``EnforceUniqueEntity``) when a
uniquely-constrained string starts or ends with a space (FalkorDB issue #1340, still on 4.20.1),
and a value over 4,096 bytes under a unique constraint crashes or goes unenforced (#2440). Its
range index strips leading and trailing white space from what it stores (checked by hand on
4.16.3: ``'a'``, ``'a '``, ``' a'`` and ``'a\\t'`` are one key, and a lookup of ``'a '`` finds
none of them) and cannot find a value of 5,000 bytes at all. Source names, event ids and store
keys come from agents, models and senders, so the constrained and looked-up property of each
label is ``uid``: a fixed-length hex digest of the label and the name, with the name kept as an
ordinary property beside it (``id``).
"""

from __future__ import annotations

import functools
import hashlib

# Labels whose ``uid`` carries the unique constraint (queries.UNIQUE), and the row fields of a
# write's parameters that name a node of each: (list, field holding the name, field for its uid).
UID = "uid"


@functools.lru_cache(maxsize=65_536)
def uid(label: str, name: str) -> str:
    """The digest a node of ``label`` named ``name`` is found and kept unique by: 32 hex
    characters, whatever ``name`` holds (spaces, any Unicode, any length)."""
    return hashlib.blake2b(f"{label}\x1f{name}".encode("utf-8", "surrogatepass"),
                           digest_size=16).hexdigest()


def source_uid(name: str) -> str:
    return uid("Source", name)


def mem_uid(mem_id: str) -> str:
    return uid("Mem", mem_id)


def justification_uid(justification_id: str) -> str:
    return uid("Justification", justification_id)


# Which rows of a write's parameters create or find which nodes: (parameter, name field, label,
# uid field). ``keyed`` adds the uid fields, so planning (the pure core) never sees them.
_ROWS = (
    ("sources", "id", "Source", "uid"),
    ("mems", "id", "Mem", "uid"),
    ("new", "id", "Mem", "uid"),
    ("updates", "id", "Mem", "uid"),
    ("groundings", "source", "Source", "suid"),
    ("groundings", "mem", "Mem", "muid"),
    ("justifications", "id", "Justification", "uid"),
    ("supersedes", "new", "Mem", "nuid"),
    ("supersedes", "old", "Mem", "ouid"),
    ("idents", "key", "Ident", "iuid"),  # graph.lineage_queries
    ("idents", "mem", "Mem", "muid"),
)


def keyed(params: dict) -> dict:
    """``params`` of a write (queries.APPLY, queries.WRITE_BATCH) with each row that names a
    node given that node's uid (new dicts: the caller's rows are not changed)."""
    out = dict(params)
    for name in {row[0] for row in _ROWS}:
        rows = params.get(name)
        if not rows:
            continue
        fields = [(f, label, to) for n, f, label, to in _ROWS if n == name]
        out[name] = [{**r, **{to: uid(label, r[f]) for f, label, to in fields}} for r in rows]
    return out


__all__ = ["UID", "justification_uid", "keyed", "mem_uid", "source_uid", "uid"]
