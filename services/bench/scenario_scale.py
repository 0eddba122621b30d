"""The scale scenario of `rescind bench rules`: the engine benchmark's agent-like graph, whole
sources retracted one by one."""

from __future__ import annotations

import random
from collections.abc import Iterator

from rescind.bench.generator import agent_like, plain_clusters
from rescind.bench.scenarios import Batch, Case, Checkpoint
from rescind.engine.retraction import Retract
from rescind.engine.writes import Write


def scale_case(memories: int, samples: int, batch: int = 5000, seed: int = 11) -> Case:
    """The engine benchmark's agent-like graph; ``samples`` whole sources retracted one by one."""
    clusters = plain_clusters(memories)
    tenant = f"bench-rules-scale-{memories}"
    targets = random.Random(seed).sample([c.source for c in clusters], min(samples, len(clusters)))

    def stream() -> Iterator[Batch | Checkpoint]:
        pending: list[Write] = []
        for writes in agent_like(tenant, clusters):
            pending.extend(writes)
            if len(pending) >= batch:
                yield Batch(pending)
                pending = []
        if pending:
            yield Batch(pending)
        last = len(targets) - 1
        for i, s in enumerate(targets):
            yield Checkpoint(f"{s} compromised", 10**15 + i,
                             [Retract(f"r-{s}", s, reason="bench")], score=i == last)

    return Case(name=f"scale/{memories}", stream=stream,
                sources=[{"id": c.source, "kind": "portal", "name": c.source, "domain": c.source}
                         for c in clusters],
                params={"memories": memories, "retractions": len(targets), "seed": seed,
                        "cluster": clusters[0].size if clusters else 0},
                scored_rule2=False)
