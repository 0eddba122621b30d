"""The payment gate's Cypher: what the writer reads for the gate's kept facts, and the gate's
decisions, kept as Gate nodes in its log (a graph beside the tenant's), with what it allowed
before (read once, to seed the gate's ledger)."""

# What the writer reads after each batch it lands (``rescind.engine.writes.settle``): each
# memory the batch wrote (or changed), as one row of ``queries.CONE`` (its facts, premises and
# groundings), which the writer keeps for the gate (``rescind.graph.gate_facts``). It touches
# every relation the gate's cone statement reads (PREMISE_OF, JUSTIFIES, STATUS, SAID), and
# reading a relation is what makes FalkorDB assemble (and, past DELTA_MAX_PENDING_CHANGES,
# merge) the additions pending on it: the writer pays for that, not the next payment. A tenth
# column holds an action's stored proposal, as ``queries.ACTIONS_IN`` reads it.
GATE_FACTS = """
UNWIND $ids AS id
MATCH (x:Mem {id: id})-[st:STATUS]->()
OPTIONAL MATCH (p)-[:PREMISE_OF]->(j)-[:JUSTIFIES]->(x)
WITH x, st, collect([ID(j), p.id]) AS premises
OPTIONAL MATCH (s:Source)-[g:SAID]->(x) WHERE x.grounded
RETURN x.id, x.kind, st.status, st.cause, st.hops, x.withdrawn_by,
       CASE WHEN x.grounded THEN x.text END, premises,
       collect([s.id, g.at, g.via, s.domain, s.kind]),
       CASE WHEN x.kind = 'action' THEN properties(x) + properties(st) END
"""

# The gate's decisions are kept in a graph of their own beside the tenant's
# (``rescind.contract.layout.gate_log_key``), copied there from the gate's ledger
# (``rescind.graph.gate_ledger``) after the answer: the queries below run on it, except GATE_KEPT,
# which reads the decisions a tenant's graph held before that graph existed (copied once by
# GATE_COPY, by each decision's id: a copy cut short is done again without doubles). Its
# indexes: the aggregate's keys, the moment, and the id the copy merges on.
LOG_INDEXED = ("account_key", "payee_key", "at", "id")

GATE_KEPT = "MATCH (d:Gate) RETURN properties(d)"

GATE_COPY = "UNWIND $rows AS r MERGE (d:Gate {id: r.id}) SET d = r"

# A gate decision as the gate kept it in a graph before its ledger (``rescind.graph.
# gate_ledger``) kept it first: what was asked, what the gate said and why (the properties a
# record copied by GATE_COPY has). No edges: it is not part of what anything believes. ``execution`` is what
# the aggregate counts once (``rescind.core.gate_rule.execution_key``); ``expired`` marks a
# question judged after its asker stopped waiting (never allowed).
GATE_RECORD = """
CREATE (:Gate {id: $id, action: $action, name: $name, at: $at, amount: $amount,
               currency: $currency, base_amount: $base_amount, account: $account,
               account_key: $account_key, payee: $payee, payee_key: $payee_key,
               allowed: $allowed, reason: $reason, fragility: $fragility, domains: $domains,
               would_fall: $would_fall, execution: $execution, expired: $expired,
               aggregate: $aggregate, trace: $trace})
"""

# What the gate allowed, as the gate's ledger keeps it (``rescind.graph.gate_ledger.seed``):
# read once, when the ledger is first used beside a log that held decisions before it. The
# aggregate is read from the ledger since (one Lua script: no query thread to wait for); a
# decision kept before executions were recorded counts as one execution of its action.
GATE_ALLOWED = """
MATCH (d:Gate) WHERE d.allowed
RETURN d.id, coalesce(d.execution, d.action), coalesce(d.base_amount, d.amount), d.at,
       d.account_key, d.payee_key
"""

# The gate's decisions, newest first; of one action when ``action`` is given.
GATE_LOG = """
MATCH (d:Gate) WHERE $action IS NULL OR d.action = $action
RETURN d.at, d.action, d.name, d.amount, d.currency, d.base_amount, d.account, d.payee,
       d.allowed, d.reason, d.fragility, d.domains, d.would_fall, d.aggregate, d.trace,
       coalesce(d.execution, d.action), coalesce(d.expired, false)
ORDER BY d.at DESC LIMIT $limit
"""

# The gate's last decision about each of ``ids`` (actions), with when and why.
GATE_LAST = """
MATCH (d:Gate) WHERE d.action IN $ids
WITH d.action AS action, d ORDER BY d.at DESC
WITH action, collect([d.allowed, d.reason, d.at, d.execution])[0] AS last
RETURN action, last[0], last[1], last[2], last[3]
"""
