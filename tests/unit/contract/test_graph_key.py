"""Graph and lock keys of a tenant."""

from rescind.contract.layout import graph_key


def test_graph_key_uses_a_hash_tag():
    """A tenant's graph key carries its hash tag, for clusters."""
    assert graph_key("acme") == "rescind:{acme}"
