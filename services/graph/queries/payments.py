"""Payments (memories of kind ``action``) and their recalls (``rescind.operator.recalls``): the
actions with their statuses, what the sources that speak for a payee said, and what an
approval left in the outbox for the bank."""

from __future__ import annotations

ACTIONS_IN = """
UNWIND $ids AS id
MATCH (m:Mem {id: id, kind: 'action'})-[st:STATUS]->()
RETURN properties(m) + properties(st)
"""

ACTIONS = """
MATCH (m:Mem {kind: 'action'})-[st:STATUS]->()
RETURN properties(m) + properties(st)
"""

# What the sources that speak for a payee said: a source whose id is the payee's, or ends in
# ':' and the payee's (portal:northwind, contract:northwind for payee northwind), with each
# observation's status, newest first. A scan of the sources: a tenant has few.
PAYEE_SAID = """
MATCH (s:Source)-[:SAID]->(m:Mem {kind: 'observation'})-[st:STATUS]->()
WHERE s.id = $payee OR s.id ENDS WITH $suffix
RETURN DISTINCT s.id, s.kind, m.text, st.status, m.at
ORDER BY m.at DESC
"""

# The outbox entries of ``ids`` (``recall:<action>``): what an approval left for the bank.
OUTBOX_IN = """
UNWIND $ids AS id
MATCH (o:Outbox {id: id})
RETURN o.id, o.action, o.by, o.at, o.sent
"""
