"""The `mcp` SDK adapter's driver protocol 1.1 `listen`, and the headless authorization of
the mcp and fastmcp adapters, against real mock servers.

The end-to-end tests (tests/e2e/test_e2e_real_clients.py) judge what the SDK does under the
whole suite; these pin down the adapter's own part: the subscription's states are reported
as `subscription` events, a revision without `subscriptions/listen` is refused locally as
`unsupported` (nothing sent), and close() ends an open subscription with no event after it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _machine import within

from harness.clients import (
    Authorization,
    ClientError,
    ClientEvent,
    ConnectOptions,
    HttpTarget,
    StdioTarget,
)
from harness.clients._sdk_fastmcp import FastMcpClient
from harness.clients._sdk_mcp import HeadlessBrowser, McpSdkClient
from harness.clients.reference._auth import parse_challenge
from mock_servers._fixtures import fixtures_root
from mock_servers.engine._script import load_script
from mock_servers.engine._transcript import read_transcript
from mock_servers.http import HttpMockServer
from mock_servers.stdio._server import stdio_command

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

LISTEN_SCRIPT = fixtures_root() / "http" / "listen-relisten.json"
TOOLS_SCRIPT = fixtures_root() / "tools" / "list-and-call.json"
FILTER = {"toolsListChanged": True}
BOUND = within(30.0)  # seconds: the bound of one exchange with the SDK


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the adapter keeps the SDK's contexts in asyncio tasks


@contextmanager
def http_mock(script: Path, tmp_path: Path) -> Iterator[HttpTarget]:
    with HttpMockServer(
        load_script(script),
        revision="2026-07-28",
        transcript_path=tmp_path / "transcript.jsonl",
    ) as server:
        yield HttpTarget(server.url)


def sent(tmp_path: Path, method: str) -> list[dict[str, Any]]:
    entries = read_transcript(tmp_path / "transcript.jsonl")["entries"]
    return [
        e["message"]
        for e in entries
        if e["kind"] == "message"
        and e["direction"] == "client"
        and e["message"].get("method") == method
    ]


class Subscriptions:
    """The subscription events the client surfaced, and a wait for one of them."""

    def __init__(self) -> None:
        self.states: list[dict[str, Any]] = []
        self._changed = anyio.Event()

    def on_event(self, event: ClientEvent) -> None:
        if event.event == "subscription":
            self.states.append(dict(event.params))
            self._changed.set()
            self._changed = anyio.Event()

    async def until(self, state: str) -> None:
        with anyio.fail_after(BOUND):
            while not any(s["state"] == state for s in self.states):
                await self._changed.wait()


async def test_a_subscription_is_reported_until_the_server_ends_it(tmp_path: Path) -> None:
    seen = Subscriptions()
    client = McpSdkClient()
    assert "listen" in client.supports
    try:
        with http_mock(LISTEN_SCRIPT, tmp_path) as target:
            with anyio.fail_after(BOUND):
                await client.connect(
                    target, ConnectOptions(timeout=within(10), on_event=seen.on_event)
                )
                assert await client.listen(FILTER) == {"notifications": FILTER}
            await seen.until("ended")
            with anyio.fail_after(BOUND):
                await client.close()
    finally:
        await client.close()
    # The server's result ends the subscription; listening again is left to the client
    # (the SDK leaves it to its application: docs/findings.md, F17).
    assert seen.states == [
        {"state": "acknowledged", "notifications": FILTER},
        {"state": "ended", "reason": "result"},
    ]
    listens = sent(tmp_path, "subscriptions/listen")
    assert [m["params"]["notifications"] for m in listens] == [FILTER]


async def test_close_ends_an_open_subscription_without_an_event(tmp_path: Path) -> None:
    script = json.loads(LISTEN_SCRIPT.read_text(encoding="utf-8"))
    script["steps"] = [s for s in script["steps"] if s["label"] == "second listen"]  # it hangs
    held = tmp_path / "listen-held.json"
    held.write_text(json.dumps(script), encoding="utf-8")
    seen = Subscriptions()
    client = McpSdkClient()
    try:
        with http_mock(held, tmp_path) as target:
            with anyio.fail_after(BOUND):
                await client.connect(
                    target, ConnectOptions(timeout=within(10), on_event=seen.on_event)
                )
                assert await client.listen(FILTER) == {"notifications": FILTER}
                await client.close()
    finally:
        await client.close()
    assert seen.states == [{"state": "acknowledged", "notifications": FILTER}]


async def test_listen_is_refused_locally_before_2026(tmp_path: Path) -> None:
    transcript = tmp_path / "transcript.jsonl"
    command = stdio_command(TOOLS_SCRIPT, revision="2025-11-25", transcript=transcript)
    seen = Subscriptions()
    client = McpSdkClient()
    try:
        with anyio.fail_after(BOUND):
            connected = await client.connect(
                StdioTarget(tuple(command)),
                ConnectOptions(timeout=within(10), on_event=seen.on_event),
            )
            assert connected["protocolVersion"] == "2025-11-25"
            with pytest.raises(ClientError) as refused:
                await client.listen(FILTER)
            await client.close()
    finally:
        await client.close()
    assert refused.value.kind == "unsupported", refused.value
    assert sent(tmp_path, "subscriptions/listen") == []
    assert seen.states == []


CODE_FLOW_SCRIPT = fixtures_root() / "auth" / "code-flow.json"
HEADLESS = Authorization(
    client_name="mcp-testbench adapter test", redirect_uri="http://127.0.0.1:33418/callback"
)


def auth_entries(tmp_path: Path, endpoint: str) -> list[dict[str, Any]]:
    entries = read_transcript(tmp_path / "transcript.jsonl")["entries"]
    return [e for e in entries if e["kind"] == "auth" and e.get("endpoint") == endpoint]


@pytest.mark.parametrize("adapter", [McpSdkClient, FastMcpClient])
async def test_the_sdks_own_flow_completes_with_the_headless_browser(
    tmp_path: Path, adapter: type[McpSdkClient] | type[FastMcpClient]
) -> None:
    client = adapter()
    assert "auth" in client.supports
    with HttpMockServer(
        load_script(CODE_FLOW_SCRIPT),
        revision="2025-11-25",
        transcript_path=tmp_path / "transcript.jsonl",
    ) as server:
        try:
            with anyio.fail_after(BOUND):
                # initialize goes out with the token the flow got (the SDKs list the tools
                # after a call, which this script has no answer for)
                await client.connect(
                    HttpTarget(server.url),
                    ConnectOptions(timeout=within(10.0), authorization=HEADLESS),
                )
        finally:
            await client.close()
    (registration,) = auth_entries(tmp_path, "register")
    assert registration["metadata"]["client_name"] == HEADLESS.client_name
    # The code the authorization endpoint redirected with is the one the SDK redeemed.
    codes = [e["code"] for e in auth_entries(tmp_path, "authorize") if "code" in e]
    redeemed = [e["params"]["code"] for e in auth_entries(tmp_path, "token")]
    assert codes
    assert redeemed == codes
    assert any(e["outcome"] == "ok" and e["bearer_header"] for e in auth_entries(tmp_path, "mcp"))


async def test_the_headless_browser_reports_an_authorization_endpoint_that_does_not_redirect(
    tmp_path: Path,
) -> None:
    with HttpMockServer(
        load_script(CODE_FLOW_SCRIPT),
        revision="2025-11-25",
        transcript_path=tmp_path / "transcript.jsonl",
    ) as server:
        async with httpx.AsyncClient(timeout=BOUND) as http:
            challenge = (await http.post(server.url, json={})).headers["www-authenticate"]
            prm_url = parse_challenge(challenge)["resource_metadata"]
            issuer = (await http.get(prm_url)).json()["authorization_servers"][0]
        browser = HeadlessBrowser()
        with anyio.fail_after(BOUND), pytest.raises(ClientError, match="400 without a redirect"):
            # An unknown client: RFC 6749 §4.1.2.1, answered at the endpoint, no redirect.
            await browser.redirect_handler(f"{issuer}/authorize?client_id=nobody")
        with pytest.raises(ClientError, match="before any redirect"):
            await browser.callback_handler()
