"""The rows inside a WriteBatch and a Mutation, typed once in rescind.core.shapes: their fields
are those the write queries read, and the rows planning builds have no other."""

import re
import typing

from rescind.core.belief import Node, Rules, Status
from rescind.core.planning import Write, fresh, plan_batch
from rescind.core.shapes import MemRow, Mutation, RetractionRow, WriteBatch
from rescind.graph import keys
from rescind.graph.queries import writes as wq
from tests.support.rows import misfits, row_types

_BINDING = re.compile(r"(?:\((\w+) IN \$(\w+)\s*\|)|(?:UNWIND \$(\w+) AS (\w+))")


def read_fields(query: str) -> dict[str, set[str]]:
    """For each row parameter (``$name``) of ``query``: the fields it reads of the row, from its
    binding (FOREACH ... IN, UNWIND ... AS) to the next one."""
    found = list(_BINDING.finditer(query))
    out: dict[str, set[str]] = {}
    for i, m in enumerate(found):
        var, param = (m[1], m[2]) if m[1] else (m[4], m[3])
        end = found[i + 1].start() if i + 1 < len(found) else len(query)
        out.setdefault(param, set()).update(re.findall(rf"\b{var}\.(\w+)", query[m.end():end]))
    return out


def declared(tp) -> set[str]:
    return set(typing.get_type_hints(tp))


def test_a_new_memory_row_declares_exactly_the_fields_a_node_is_created_with():
    """MemRow is queries.MEM_FIELDS and STATUS_FIELDS; a RetractionRow RETRACTION_FIELDS."""
    assert declared(MemRow) == set(wq.MEM_FIELDS) | set(wq.STATUS_FIELDS)
    assert declared(RetractionRow) == set(wq.RETRACTION_FIELDS)


def test_every_field_the_write_queries_read_of_a_row_is_declared_by_its_type():
    """APPLY and WRITE_BATCH read only declared fields, or the uids the graph layer adds."""
    uids = {}
    for param, _field, _label, to in keys._ROWS:
        uids.setdefault(param, set()).add(to)
    for query, shape in ((wq.APPLY, Mutation), (wq.WRITE_BATCH, WriteBatch)):
        types = row_types(shape)
        read = read_fields(str(query))
        assert set(read) == set(types)  # every list is sent, and read
        for param, fields in read.items():
            assert fields - declared(types[param]) - uids.get(param, set()) == set(), param


def test_the_rows_keyed_names_are_declared_by_their_types():
    """keys.keyed finds a node by a field each row type declares."""
    types = {**row_types(Mutation), **row_types(WriteBatch)}
    for param, field, _label, _to in keys._ROWS:
        assert field in declared(types[param]), (param, field)


def test_a_planned_batch_s_rows_are_the_declared_ones():
    """Observations, a belief, an action and a re-grounded memory give rows of their types."""
    writes = [Write("e1", "o", "observation", "remit to acct no. 12-34-5678", 10, source="portal"),
              Write("e2", "b", "belief", "owed", 11, premises=("o",), agent="ap", run="r"),
              Write("e3", "a", "action", "pay", 12, premises=("b",), agent="ap",
                    extra={"amount": 5.0, "currency": "EUR", "payee": "acme", "seq": 1}),
              Write("e4", "old", "observation", "again", 13, source="mail"),
              Write("e5", "x", "belief", "back", 14, premises=("o",))]  # OUT, comes IN
    known = {"old": Status("IN"), "x": Status("OUT", "r1", 0)}
    plan = plan_batch(writes, fresh(writes, set()), 3, known, Rules(),
                      {"x": Node(id="x", kind="belief")})
    b = plan.batch
    assert b.new and b.updates and b.groundings and b.justifications and b.idents and b.changes
    assert misfits(b) == []
