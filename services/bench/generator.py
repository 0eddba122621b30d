"""Agent-like graphs for benchmarks: many sources, each with a local cluster of memories.

Every source (a vendor portal, say) has observations; beliefs rest on one or two observations
of the same source, now and then corroborated by a neighbour's; plans combine beliefs; actions
rest on plans. Retracting one source therefore touches its own cluster, as in real use, and the
cluster size sets the region size.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from rescind.engine.writes import Write

# Shares of a cluster by kind; they add up to 1.
MIX = {"observation": 0.2, "belief": 0.4, "plan": 0.25, "action": 0.15}
DAY = 86_400_000_000


@dataclass(frozen=True)
class Cluster:
    source: str
    size: int


def cluster_writes(tenant: str, c: Cluster, rng: random.Random, neighbour_obs: list[str],
                   t0: int) -> tuple[list[Write], list[str]]:
    """The writes of one cluster, in an order where premises come first; and its observations."""
    n_obs = max(1, round(c.size * MIX["observation"]))
    n_bel = max(1, round(c.size * MIX["belief"]))
    n_act = max(1, round(c.size * MIX["action"]))
    n_plan = max(1, c.size - n_obs - n_bel - n_act)
    writes: list[Write] = []
    obs = [f"{c.source}/o{i}" for i in range(n_obs)]
    for i, mid in enumerate(obs):
        writes.append(Write(f"e:{mid}", mid, "observation", f"{c.source} says fact {i}",
                            t0 + i, source=c.source))
    bels = [f"{c.source}/b{i}" for i in range(n_bel)]
    for i, mid in enumerate(bels):
        prem = tuple(rng.sample(obs, min(len(obs), rng.choice((1, 1, 2)))))
        writes.append(Write(f"e:{mid}", mid, "belief", f"note {mid}", t0 + n_obs + i,
                            premises=prem, agent="ap"))
        if neighbour_obs and rng.random() < 0.1:  # corroborated by another source
            writes.append(Write(f"e2:{mid}", mid, "belief", f"note {mid}", t0 + n_obs + i,
                                premises=(rng.choice(neighbour_obs),), agent="ap"))
    plans = [f"{c.source}/p{i}" for i in range(n_plan)]
    for i, mid in enumerate(plans):
        prem = tuple(rng.sample(bels, min(len(bels), 2)))
        writes.append(Write(f"e:{mid}", mid, "plan", f"plan {mid}", t0 + c.size + i,
                            premises=prem, agent="payments"))
    for i in range(n_act):
        mid = f"{c.source}/a{i}"
        amount = float(rng.choice((800, 6000, 34500)))
        writes.append(Write(f"e:{mid}", mid, "action", f"pay {mid}", t0 + 2 * c.size + i,
                            premises=(rng.choice(plans),), agent="payments",
                            extra={"amount": amount, "payee": c.source, "executed": i % 2 == 0}))
    return writes, obs


def agent_like(tenant: str, clusters: list[Cluster], seed: int = 7) -> Iterator[list[Write]]:
    """Yield the writes of each cluster in turn (sources first, see ``sources``)."""
    rng = random.Random(seed)
    previous: list[str] = []
    for k, c in enumerate(clusters):
        writes, obs = cluster_writes(tenant, c, rng, previous, k * DAY)
        previous = obs
        yield writes


def plain_clusters(memories: int, size: int = 100, prefix: str = "vendor") -> list[Cluster]:
    return [Cluster(f"{prefix}{i}", size) for i in range(memories // size)]
