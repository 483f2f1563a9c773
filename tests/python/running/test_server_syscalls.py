"""kvlab-server's system calls per request, counted by the kernel's tracepoints.

A known answer: one client sending one request at a time, each only after the
previous reply. Redis's loop (and kvlab-server's event loop since it left Asio's
reactor) reads each request with exactly one recv() and answers with one send();
Asio's speculative read after each reply made two recv() per request, the second
failing. A count, not a speed: no clock is read.
"""

import socket
import subprocess

import pytest

from kvlab.running import syscalls

REQUESTS = 2000
PING = b"*1\r\n$4\r\nPING\r\n"


def _start_server(build_dir, socket_path, engine_args):
    server = subprocess.Popen([str(build_dir / "kvlab-server"), "--port", "0",
                               "--unixsocket", str(socket_path)] + engine_args,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready = server.stdout.readline()
    assert ready.startswith("kvlab-server ready"), server.stderr.read()
    return server


def _one_request_at_a_time(client: socket.socket) -> int:
    for _ in range(REQUESTS):
        client.sendall(PING)
        reply = b""
        while not reply.endswith(b"\r\n"):
            chunk = client.recv(64)
            assert chunk, "the server closed the connection"
            reply += chunk
        assert reply == b"+PONG\r\n"
    return REQUESTS


@pytest.mark.parametrize("engine_args", [["--engine", "single"],
                                         ["--engine", "sharded", "--shards", "1",
                                          "--hop", "batch", "--io-threads", "1"]],
                         ids=["single", "sharded"])
def test_one_recv_and_one_send_per_request(build_dir, tmp_path, engine_args):
    socket_path = tmp_path / "kvlab.sock"
    server = _start_server(build_dir, socket_path, engine_args)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(socket_path))
            _one_request_at_a_time(client)  # warm: the connection is registered
            count = syscalls.syscalls_per_op(
                server.pid, lambda: _one_request_at_a_time(client), method="perf",
                names=("recvfrom", "sendto", "epoll_wait", "futex", "write"))
        per_request = count.per_op_by_name()
        assert count.calls_by_name["recvfrom"] == REQUESTS, per_request
        assert count.calls_by_name["sendto"] == REQUESTS, per_request
        if engine_args[1] == "single":
            # The loop sleeps once per request and wakes when it arrives: nothing else.
            assert count.calls_by_name["epoll_wait"] == pytest.approx(REQUESTS, abs=5)
            assert count.per_op == pytest.approx(3.0, abs=0.01), per_request
    finally:
        server.terminate()
        server.wait(timeout=30)
