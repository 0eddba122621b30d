"""A loopback port chosen for a server can be taken before the server binds it (another server
starting, or the local end of an outgoing connection): a port Rescind chose is chosen again, a
port the user gave is not."""

import socket

import pytest
import redis

from rescind.runtime.cluster import ClusterNode
from rescind.runtime.readiness import ServerError
from rescind.runtime.server import EmbeddedFalkorDB


@pytest.fixture
def taken():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def test_a_chosen_port_taken_meanwhile_is_chosen_again(taken):
    server = EmbeddedFalkorDB()
    server.port = taken  # as if another process had bound it after free_port() chose it
    with server:
        assert server.port != taken
        assert redis.Redis.from_url(server.url).ping()


def test_a_cluster_node_chooses_both_its_ports_again(taken):
    node = ClusterNode(None)
    node.port = taken
    try:
        node.start()
        assert node.port != taken
        assert node.client().info("cluster")["cluster_enabled"] == 1
    finally:
        node.stop()


def test_a_port_the_user_gave_is_not_changed(taken):
    with pytest.raises(ServerError, match="Address already in use"):
        EmbeddedFalkorDB(port=taken).start()
