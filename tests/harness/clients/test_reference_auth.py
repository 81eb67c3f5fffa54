"""The reference client's OAuth 2.1 flow against the mock authorization server.

A correct client gets through every conformant variant of the mock (so the mock never
fails a correct client), refuses the variants it must refuse (without redeeming a code
or sending a token), and leaves on the transcript the evidence the AUTH checks will
judge: the discovery order, PKCE, `resource`, the token in the header only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
import pytest
from _machine import within

from harness.clients import ReferenceClient
from harness.clients._contract import ClientError, ConnectOptions, HttpTarget
from mock_servers.engine._script import parse_script
from mock_servers.http import HttpMockServer

pytestmark = pytest.mark.anyio

WAIT = within(20.0)
REVISION = "2025-11-25"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _script(auth: Mapping[str, Any], revision: str = REVISION) -> Any:
    return parse_script(
        {
            "format_version": 1,
            "name": "ref-auth",
            "revisions": [revision],
            "transports": ["http"],
            "server": {"capabilities": {"tools": {}}},
            "auth": dict(auth),
            "steps": [
                {
                    "expect": {"method": "tools/call", "params": {"name": "write"}},
                    "repeat": True,
                    "reply": {"result": {"content": [{"type": "text", "text": "ok"}]}},
                }
            ],
        }
    )


async def _run(auth: Mapping[str, Any], revision: str = REVISION) -> tuple[Any, list[Any]]:
    """Connect and call one tool; (the call's result or the ClientError, auth entries)."""
    with HttpMockServer(_script(auth, revision), revision=revision) as server:
        client = ReferenceClient()
        outcome: Any
        try:
            with anyio.fail_after(WAIT):
                await client.connect(HttpTarget(server.url), ConnectOptions(timeout=within(5.0)))
                outcome = await client.call_tool("write", {})
        except ClientError as exc:
            outcome = exc
        finally:
            with anyio.fail_after(WAIT):
                await client.close()
        entries = list(server.transcript.of_kind("auth"))
        requests = list(server.transcript.of_kind("http_request"))
    return outcome, [entries, requests]


@pytest.mark.parametrize(
    "auth",
    [
        {},
        {"protected_resource": {"in_www_authenticate": False}},
        {"protected_resource": {"locations": ["root"], "in_www_authenticate": False}},
        {"authorization_server": {"tenant": "/tenant1"}},
        {"authorization_server": {"tenant": "/tenant1", "metadata": ["oidc-appended"]}},
        {"authorization_server": {"metadata": ["oidc-inserted"], "iss": "absent"}},
        {"challenge_scope": "mcp:read", "authorization_server": {"scopes_supported": ["mcp:read"]}},
        {"protected_resource": {"scopes_supported": ["mcp:read", "mcp:write"]}},
        {"token_uses": 2},
        {"legacy_2025_03_26": {}},
        {"legacy_2025_03_26": {"metadata": False}},
        {"authorization_server": {"token_endpoint_auth_methods": ["client_secret_basic"]}},
        {"authorization_server": {"token_endpoint_auth_methods": ["client_secret_post"]}},
        {"migrate_after": 1},
    ],
    ids=[
        "default",
        "prm-path-not-in-challenge",
        "prm-root-only",
        "tenant-oauth",
        "tenant-oidc-appended",
        "oidc-no-iss",
        "challenge-scope",
        "prm-scopes",
        "refresh",
        "legacy-metadata",
        "legacy-default-endpoints",
        "secret-basic-only",
        "secret-post-only",
        "authorization-server-moved",
    ],
)
async def test_a_correct_client_gets_through_every_conformant_variant(
    auth: Mapping[str, Any],
) -> None:
    revision = "2025-03-26" if "legacy_2025_03_26" in auth else REVISION
    outcome, (entries, requests) = await _run(auth, revision)
    assert not isinstance(outcome, ClientError), outcome
    assert outcome["content"][0]["text"] == "ok"
    tokens = [e for e in entries if e["endpoint"] == "token"]
    assert tokens
    assert all(e["outcome"] == "ok" for e in tokens)
    # The token only ever in the Authorization header, only to the MCP server.
    assert not any(e.get("token_in_query") for e in entries)
    assert not any(e.get("issued_token") for e in entries if e["server"] == "authorization")
    assert all("access_token" not in r.get("query", "") for r in requests)
    authorize = next(e for e in entries if e["endpoint"] == "authorize")
    assert authorize["params"]["code_challenge_method"] == "S256"
    if revision != "2025-03-26":
        assert authorize["params"]["resource"].endswith("/mcp")
    if "challenge_scope" in auth:
        assert authorize["params"]["scope"] == "mcp:read"
    methods = auth.get("authorization_server", {}).get("token_endpoint_auth_methods")
    if methods:
        # Registered for the one method the server has, and authenticated that way.
        assert all(e["registered_auth"] == e["client_auth"] == methods[0] for e in tokens)
    if "migrate_after" in auth:
        # A token of each server, each redeemed at its own; the last request uses the new one.
        assert [e["issuer"] for e in tokens] == [
            e["issuer"] for e in entries if e["endpoint"] == "authorize"
        ]
        assert len({e["issuer"] for e in tokens}) == 2
        mcp = [e for e in entries if e["endpoint"] == "mcp"]
        assert mcp[-1]["token_issuer"] == tokens[-1]["issuer"]
    if "token_uses" in auth:
        assert [e["params"]["grant_type"] for e in tokens] == [
            "authorization_code",
            "refresh_token",
        ]


async def test_discovery_order_with_a_tenant_issuer() -> None:
    auth = {
        "protected_resource": {"in_www_authenticate": False, "locations": ["root"]},
        "authorization_server": {"tenant": "/t1", "metadata": ["oidc-appended"]},
    }
    outcome, (entries, _) = await _run(auth)
    assert not isinstance(outcome, ClientError), outcome
    probed = [e["path"] for e in entries if e["method"] == "GET" and "well-known" in e["path"]]
    assert probed == [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server/t1",
        "/.well-known/openid-configuration/t1",
        "/t1/.well-known/openid-configuration",
    ]


async def test_step_up_then_stop_when_it_never_ends() -> None:
    outcome, (entries, _) = await _run({"step_up": {"tools": ["write"], "scope": "mcp:write"}})
    assert not isinstance(outcome, ClientError), outcome
    outcomes = [e["outcome"] for e in entries if e["endpoint"] == "mcp"]
    assert outcomes.count("insufficient_scope") == 1
    step = outcomes.index("insufficient_scope")
    assert outcomes[step + 1] == "ok"  # the call again, with the bigger token
    scopes = [e["params"].get("scope") for e in entries if e["endpoint"] == "authorize"]
    assert scopes[-1] == "mcp:write"
    outcome, (entries, _) = await _run(
        {"step_up": {"tools": ["write"], "scope": "mcp:write", "always": True}}
    )
    assert isinstance(outcome, ClientError)
    assert len([e for e in entries if e["outcome"] == "insufficient_scope"]) == 2


@pytest.mark.parametrize(
    ("auth", "why"),
    [
        ({"protected_resource": {"resource": "mismatch"}}, "resource metadata is for"),
        ({"authorization_server": {"code_challenge_methods": None}}, "PKCE S256"),
        ({"authorization_server": {"iss": "wrong"}}, "iss"),
    ],
    ids=["resource-mismatch", "no-pkce-methods", "wrong-iss"],
)
async def test_a_correct_client_refuses_what_it_must(auth: Mapping[str, Any], why: str) -> None:
    outcome, (entries, _) = await _run(auth)
    assert isinstance(outcome, ClientError)
    assert why in outcome.message
    # Refused before it redeemed a code or used a token.
    assert not [e for e in entries if e["endpoint"] == "token"]
    assert not [e for e in entries if e["endpoint"] == "mcp" and e["outcome"] == "ok"]
