"""A server's TCP port: one that ServerProcess chose itself and finds taken at start is
replaced by another (another run's probe may pick the same free port between the choice
and the bind); a port the caller gave is never moved, and its failure says why."""

import socket

import pytest

from kvlab.schema.specs import ServerSpec
from kvlab.running.servers import ServerError, ServerProcess, ping_unix

SPECS = [ServerSpec("single", "kvlab", "single"), ServerSpec("redis", "redis")]


def _occupy(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:port, as another run's server would hold it."""
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    holder.bind(("127.0.0.1", port))
    holder.listen(1)
    return holder


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
def test_a_chosen_port_found_taken_is_replaced(spec, build_dir, tmp_path):
    server = ServerProcess(spec, build_dir, tmp_path, tmp_path / "server.log", None)
    taken = server.port
    with _occupy(taken):
        server.start()
        try:
            assert server.port != taken
            assert server.target() == f"tcp://127.0.0.1:{server.port}"
            assert str(server.port) in server.command
            assert ping_unix(server.unix_socket)
            with socket.create_connection(("127.0.0.1", server.port), timeout=5) as client:
                client.sendall(b"PING\r\n")
                assert client.recv(64) == b"+PONG\r\n"
        finally:
            server.stop()
    # the first try's failure is in the log, so a reader sees why the port moved
    assert "Address already in use" in (tmp_path / "server.log").read_text()


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
def test_a_given_port_found_taken_is_an_error_that_says_so(spec, build_dir, tmp_path):
    with _occupy(0) as holder:
        port = holder.getsockname()[1]
        server = ServerProcess(spec, build_dir, tmp_path, tmp_path / "server.log", None,
                               port=port)
        with pytest.raises(ServerError, match="Address already in use"):
            server.start()
        server.stop()
        assert server.port == port
