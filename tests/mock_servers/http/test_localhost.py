"""`HttpMockServer(host="localhost")`: reachable by the name on both loopback addresses.

The official conformance runner gives its clients `http://localhost:PORT` URLs; a name that
resolves to ::1 first on one machine and to 127.0.0.1 on another must reach the mock either
way, on one port.
"""

from __future__ import annotations

import socket

import httpx
import pytest

from mock_servers import fixtures_root, load_script
from mock_servers.http import HttpMockServer

SCRIPT = fixtures_root() / "conformance-clients" / "2025-11-25" / "initialize.json"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream"}


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


def test_localhost_is_served_on_127_0_0_1_with_a_localhost_url() -> None:
    with HttpMockServer(load_script(SCRIPT), revision="2025-11-25", host="localhost") as server:
        assert server.url == f"http://localhost:{server.port}/"
        answer = httpx.post(f"http://127.0.0.1:{server.port}/", json=INITIALIZE, headers=ACCEPT)
        assert answer.status_code == 200
        assert answer.json()["result"]["serverInfo"]["name"] == "test-server"


@pytest.mark.skipif(not _has_ipv6_loopback(), reason="this machine has no IPv6 loopback (::1)")
def test_localhost_is_served_on_ipv6_loopback_on_the_same_port() -> None:
    with HttpMockServer(load_script(SCRIPT), revision="2025-11-25", host="localhost") as server:
        answer = httpx.post(f"http://[::1]:{server.port}/", json=INITIALIZE, headers=ACCEPT)
        assert answer.status_code == 200
    with pytest.raises(httpx.ConnectError):  # stopped: both sockets are closed
        httpx.post(f"http://[::1]:{server.port}/", json=INITIALIZE, headers=ACCEPT, timeout=2)


def test_another_host_keeps_its_address_in_the_url() -> None:
    with HttpMockServer(load_script(SCRIPT), revision="2025-11-25") as server:
        assert server.url.startswith("http://127.0.0.1:")
