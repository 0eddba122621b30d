"""The rows the engine builds for FalkorDB (a Mutation's, a WriteBatch's) are of the types
rescind.core.shapes declares, on the real server."""

from rescind.engine import retraction as ret
from rescind.engine import writes
from tests.integration.engine.test_engine import T0, seed_world
from tests.support.rows import misfits


def test_a_correction_and_a_retraction_commit_rows_of_their_declared_types(graph):
    """A correction's mutation (reviewer source, new memory, grounding, supersedes, updates,
    status changes) and a retraction's reinstatement hold only declared fields."""
    ids = seed_world(graph)
    p = ret.preview(graph, ret.Correct("c1", ids["o1"], "o1, as it really was", by="ana"), T0 + 9)
    m = p.mutation
    assert m.sources and m.mems and m.groundings and m.supersedes and m.updates
    assert m.retractions and m.changes
    assert misfits(m) == []
    ret.commit(graph, p)
    assert misfits(m) == []  # the stored result added on commit is declared too
    ret.run(graph, ret.Retract("r1", "contract", reason="forged", by="ana"), T0 + 10)
    back = ret.preview(graph, ret.Reinstate("r1", by="ana"), T0 + 11)
    assert back.mutation.retraction_updates and back.mutation.changes
    assert misfits(back.mutation) == []


def test_a_planned_write_batch_on_the_server_is_of_its_declared_types(graph):
    """The batch the engine plans from what it reads of the graph holds declared rows only."""
    ids = seed_world(graph)
    plan = writes._plan(graph, [
        writes.Write("e8", "o9", "observation", "acct no. 12-34-5678", T0 + 4, source="portal"),
        writes.Write("e9", ids["b1"], "belief", "b1", T0 + 5, premises=("o9",))])
    assert plan.batch.new and plan.batch.justifications and plan.batch.idents
    assert misfits(plan.batch) == []
