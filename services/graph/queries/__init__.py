"""Every Cypher statement Rescind runs, named and parameterised, one module per aggregate;
nothing here formats user data. ``from rescind.graph import queries as q`` reaches them all as
``q.NAME``:

- ``layout``: indexes, constraints, the revision and its guard, migrations of older graphs;
- ``memories``: facts, statuses, names, and the pages and counts the operator surfaces list;
- ``history``: a memory's birth and later changes ("as of");
- ``justifications``: the region walk downstream and the cone upstream;
- ``sources``: sources, their domains and groundings, merging variant spellings;
- ``retractions``: the records and the rules in force, a source's window;
- ``payments``: the actions, and what their recalls read (a payee's sources, the outbox);
- ``versions``: which version of a store key is current;
- ``lineage``: the identifiers observations state (``Ident`` nodes);
- ``writes``: the guarded mutation and write batch;
- ``gate``: what the writer reads for the gate's kept facts, and the gate log (its decisions as
  Gate nodes, in a graph beside the tenant's).

FalkorDB 4.16 notes that shape these queries:
- no ``EXISTS {}``/``COUNT {}`` subqueries and no ``datetime()``: times are epoch microseconds;
- a variable-length ``*`` match enumerates paths, so regions are walked one hop at a time;
- an UNWIND over an empty list ends the query's rows, so optional writes use FOREACH;
- FOREACH cannot MATCH, so a write that must find existing nodes MERGEs on their indexed id.
"""

from __future__ import annotations

from rescind.graph.queries.gate import (
    GATE_ALLOWED,
    GATE_COPY,
    GATE_FACTS,
    GATE_KEPT,
    GATE_LAST,
    GATE_LOG,
    GATE_RECORD,
    LOG_INDEXED,
)
from rescind.graph.queries.history import (
    HISTORIES,
    HISTORY,
    HISTORY_PAGE,
)
from rescind.graph.queries.justifications import (
    CONE,
    DOWNSTREAM_BY_NODE,
    GROUNDINGS_BY_NODE,
    JUSTIFICATION_RULES,
    JUSTIFICATIONS_OF,
    PREMISES_BY_NODE,
    STATUSES_BY_NODE,
    UPSTREAM_STEP,
)
from rescind.graph.queries.layout import (
    GUARD,
    INDEXES,
    INIT_META,
    LAYOUT,
    MIGRATE_STATUS,
    OLD_UNIQUE,
    REVISION,
    SET_LAYOUT,
    SET_UIDS,
    UIDLESS,
    UNIQUE,
    create_index,
)
from rescind.graph.queries.lineage import (
    IDENT_LABEL,
    LINK,
    STATING,
    TEXTS,
)
from rescind.graph.queries.memories import (
    FACTS,
    LATEST_PLAN_NAMING,
    MEMORIES,
    MEMORY_COUNTS,
    MEMORY_FACTS,
    MEMORY_NAMED,
    MEMORY_PAGE,
    MEMORY_TOTAL,
    STATUSES,
    WITHDRAWALS_OF,
)
from rescind.graph.queries.payments import (
    ACTIONS,
    ACTIONS_IN,
    OUTBOX_IN,
    PAYEE_SAID,
)
from rescind.graph.queries.retractions import (
    ACTIVE_RETRACTIONS,
    RETRACTION,
    RETRACTIONS,
    WINDOW_SEEDS,
)
from rescind.graph.queries.sources import (
    DOMAINS_OF,
    MOVE,
    RENAME,
    SOURCE,
    SOURCE_READS,
    SOURCES,
    SOURCES_OF,
    SOURCES_SAID,
)
from rescind.graph.queries.versions import (
    CURRENT_OF_KEY,
    LEGACY_MARKED,
    NOT_CURRENT,
)
from rescind.graph.queries.writes import (
    APPLY,
    EXISTING_GROUNDINGS,
    EXISTING_JUSTIFICATIONS,
    MEM_CREATE_FIELDS,
    MEM_FIELDS,
    RETRACTION_FIELDS,
    STATUS_FIELDS,
    WRITE_BATCH,
)

__all__ = [
    "GATE_ALLOWED", "GATE_COPY", "GATE_FACTS", "GATE_KEPT", "GATE_LAST", "GATE_LOG", "GATE_RECORD",
    "LOG_INDEXED",
    "ACTIONS", "ACTIONS_IN", "ACTIVE_RETRACTIONS", "APPLY", "CONE", "CURRENT_OF_KEY",
    "DOMAINS_OF", "DOWNSTREAM_BY_NODE", "EXISTING_GROUNDINGS", "EXISTING_JUSTIFICATIONS",
    "FACTS", "GROUNDINGS_BY_NODE", "GUARD", "HISTORIES", "HISTORY", "HISTORY_PAGE", "IDENT_LABEL", "INDEXES",
    "INIT_META", "JUSTIFICATIONS_OF", "JUSTIFICATION_RULES", "LATEST_PLAN_NAMING",
    "LAYOUT", "LEGACY_MARKED", "LINK", "MEMORIES", "MEMORY_COUNTS", "MEMORY_FACTS",
    "MEMORY_NAMED", "MEMORY_PAGE", "MEMORY_TOTAL", "MEM_CREATE_FIELDS", "MEM_FIELDS",
    "MIGRATE_STATUS", "MOVE", "NOT_CURRENT", "OLD_UNIQUE", "OUTBOX_IN", "PAYEE_SAID",
    "PREMISES_BY_NODE", "RENAME", "RETRACTION", "RETRACTIONS", "RETRACTION_FIELDS", "REVISION",
    "SET_LAYOUT", "SET_UIDS", "SOURCE", "SOURCES", "SOURCES_OF", "SOURCES_SAID", "SOURCE_READS",
    "STATING", "STATUSES", "STATUSES_BY_NODE", "STATUS_FIELDS", "TEXTS", "UIDLESS", "UNIQUE",
    "UPSTREAM_STEP", "WINDOW_SEEDS", "WITHDRAWALS_OF", "WRITE_BATCH", "create_index",
]
