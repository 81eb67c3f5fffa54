"""The mock authorization server and protected resource (script section `auth`).

Two halves: the mock's documents and answers conform to the RFCs a correct client relies
on (RFC 8414 authorization server metadata, RFC 9728 protected resource metadata,
RFC 7591 registration, RFC 7636 PKCE, RFC 8707 resource, RFC 9207 iss), so that a correct
client is never failed by the mock; and every variant a script can ask for behaves as
docs/scripts.md says, with each request recorded for the checks. Each test runs the real
server (uvicorn on 127.0.0.1, two ports) and a plain httpx client playing the OAuth client.
"""

from __future__ import annotations

import base64
import json
import secrets
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from mock_servers.engine._script import ScriptError, parse_script
from mock_servers.http import HttpMockServer, serve_dev
from mock_servers.http._auth_server import MISMATCHED_RESOURCE, WRONG_ISSUER, pkce_s256

REVISION = "2025-11-25"
REDIRECT = "http://127.0.0.1:33418/callback"
ACCEPT = {"accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": REVISION,
        "capabilities": {},
        "clientInfo": {"name": "auth-test", "version": "1"},
    },
}
TOOLS = {"tools": [{"name": "write", "inputSchema": {"type": "object"}}]}


def _script(auth: Mapping[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "format_version": 1,
        "name": "auth-test",
        "revisions": [REVISION],
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
        **extra,
    }


@contextmanager
def _served(auth: Mapping[str, Any]) -> Iterator[tuple[HttpMockServer, httpx.Client]]:
    script = parse_script(_script(auth))
    with (
        HttpMockServer(script, revision=REVISION) as server,
        httpx.Client(timeout=10.0, follow_redirects=False) as http,
    ):
        yield server, http


def _auth_entries(mock: HttpMockServer, **match: Any) -> list[dict[str, Any]]:
    return [
        e for e in mock.transcript.of_kind("auth") if all(e.get(k) == v for k, v in match.items())
    ]


def _challenge_params(value: str) -> dict[str, str]:
    scheme, _, rest = value.partition(" ")
    assert scheme == "Bearer"
    params = {}
    for part in rest.split('", '):
        name, _, quoted = part.partition("=")
        params[name.strip()] = quoted.strip().strip('"')
    return params if rest else {}


def _assert_absolute_url(value: Any, what: str) -> None:
    """RFC 8414 §2 / RFC 9728 §2: URLs clients are told to use: absolute, https (or http
    on a loopback host, what OAuth 2.1 allows for testing), no fragment."""
    assert isinstance(value, str), what
    parts = urlsplit(value)
    assert parts.scheme in ("https", "http"), f"{what}: {value}"
    if parts.scheme == "http":
        assert parts.hostname in ("127.0.0.1", "localhost", "::1"), f"{what}: {value}"
    assert parts.netloc, f"{what}: {value}"
    assert not parts.fragment, f"{what}: {value}"


def _check_server_metadata(doc: Mapping[str, Any], issuer: str, *, oidc: bool) -> None:
    """RFC 8414 §2 required members and §3.3 issuer equality."""
    assert doc["issuer"] == issuer  # identical to the issuer the well-known URL came from
    parts = urlsplit(doc["issuer"])
    assert parts.scheme in ("https", "http")
    assert not parts.query
    assert not parts.fragment
    for name in ("authorization_endpoint", "token_endpoint"):
        _assert_absolute_url(doc[name], name)
    if "registration_endpoint" in doc:
        _assert_absolute_url(doc["registration_endpoint"], "registration_endpoint")
    assert "code" in doc["response_types_supported"]
    assert set(doc["grant_types_supported"]) >= {"authorization_code"}
    assert "S256" in doc.get("code_challenge_methods_supported", ["S256"])
    if oidc:  # OpenID Connect Discovery 1.0 §3: three more required members
        _assert_absolute_url(doc["jwks_uri"], "jwks_uri")
        assert doc["subject_types_supported"]
        assert doc["id_token_signing_alg_values_supported"]


def _well_known_inserted(issuer: str, suffix: str) -> str:
    """RFC 8414 §3.1: the well-known segment goes between the host and the issuer's path."""
    parts = urlsplit(issuer)
    return f"{parts.scheme}://{parts.netloc}/.well-known/{suffix}{parts.path.rstrip('/')}"


class _Flow:
    """The steps of a correct OAuth client, one method each, so a test can depart at one."""

    def __init__(self, server: HttpMockServer, http: httpx.Client) -> None:
        self.server = server
        self.http = http
        self.verifier = secrets.token_urlsafe(48)
        self.meta: dict[str, Any] = {}
        self.client_id = ""
        self.secret: str | None = None

    def discover(self) -> dict[str, Any]:
        first = self.http.post(self.server.url, json=INITIALIZE, headers=ACCEPT)
        assert first.status_code == 401
        params = _challenge_params(first.headers["www-authenticate"])
        prm = self.http.get(params["resource_metadata"]).json()
        issuer = prm["authorization_servers"][0]
        self.meta = self.http.get(_well_known_inserted(issuer, "oauth-authorization-server")).json()
        return prm

    def register(self, method: str = "none") -> None:
        answer = self.http.post(
            self.meta["registration_endpoint"],
            json={
                "redirect_uris": [REDIRECT],
                "token_endpoint_auth_method": method,
                "grant_types": ["authorization_code", "refresh_token"],
                "client_name": "auth-test",
            },
        )
        assert answer.status_code == 201, answer.text
        self.client_id = answer.json()["client_id"]
        self.secret = answer.json().get("client_secret")

    def authorize(self, **overrides: str | None) -> dict[str, str]:
        params: dict[str, str | None] = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": REDIRECT,
            "code_challenge": pkce_s256(self.verifier),
            "code_challenge_method": "S256",
            "state": "st-1",
            "resource": self.server.url,
        }
        params.update(overrides)
        sent = {k: v for k, v in params.items() if v is not None}
        answer = self.http.get(self.meta["authorization_endpoint"], params=sent)
        assert answer.status_code == 302, answer.text
        location = answer.headers["location"]
        assert location.startswith(str(sent["redirect_uri"]) + "?")
        return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}

    def token(self, form: Mapping[str, str], *, auth: str = "none") -> httpx.Response:
        body = dict(form)
        headers = {}
        if auth == "client_secret_basic":
            pair = f"{self.client_id}:{self.secret}".encode()
            headers["authorization"] = "Basic " + base64.b64encode(pair).decode()
        elif auth == "client_secret_post":
            body.update(client_id=self.client_id, client_secret=self.secret or "")
        else:
            body["client_id"] = self.client_id
        return self.http.post(self.meta["token_endpoint"], data=body, headers=headers)

    def redeem(self, code: str, **extra: str) -> httpx.Response:
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "code_verifier": self.verifier,
            "resource": self.server.url,
            **extra,
        }
        return self.token(form)

    def access_token(self, **authorize: str | None) -> dict[str, Any]:
        self.discover()
        self.register()
        answer = self.redeem(self.authorize(**authorize)["code"])
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    def mcp(self, token: str, message: Mapping[str, Any] = INITIALIZE) -> httpx.Response:
        headers = {**ACCEPT, "authorization": f"Bearer {token}"}
        return self.http.post(self.server.url, json=dict(message), headers=headers)


# -- the documents conform to the RFCs ---------------------------------------------------


@pytest.mark.parametrize(
    ("tenant", "documents"),
    [
        ("", ["oauth", "oidc-inserted"]),
        ("/tenant1", ["oauth"]),
        ("/tenant1", ["oidc-inserted", "oidc-appended"]),
    ],
)
def test_server_metadata_conforms_to_rfc8414_wherever_served(
    tenant: str, documents: list[str]
) -> None:
    server_settings: dict[str, Any] = {"metadata": documents}
    if tenant:
        server_settings["tenant"] = tenant
    with _served({"authorization_server": server_settings}) as (server, http):
        issuer = server.auth_url
        assert urlsplit(issuer).path == tenant
        assert urlsplit(issuer).port != server.port  # its own port
        locations = {
            "oauth": _well_known_inserted(issuer, "oauth-authorization-server"),
            "oidc-inserted": _well_known_inserted(issuer, "openid-configuration"),
            "oidc-appended": issuer.rstrip("/") + "/.well-known/openid-configuration",
        }
        for kind, url in locations.items():
            answer = http.get(url)
            if kind not in documents and locations[kind] not in (locations[d] for d in documents):
                assert answer.status_code == 404, url
                continue
            assert answer.status_code == 200, url
            assert answer.headers["content-type"].startswith("application/json")
            _check_server_metadata(answer.json(), issuer, oidc=kind.startswith("oidc"))
        if tenant:  # the root is not this issuer's metadata
            assert (
                http.get(
                    _well_known_inserted(
                        server.auth_url.rsplit(tenant, 1)[0], "oauth-authorization-server"
                    )
                ).status_code
                == 404
            )


def test_resource_metadata_conforms_to_rfc9728_at_every_location() -> None:
    settings = {
        "protected_resource": {
            "locations": ["custom", "path", "root"],
            "scopes_supported": ["mcp:read"],
        }
    }
    with _served(settings) as (server, http):
        answer = http.post(server.url, json=INITIALIZE, headers=ACCEPT)
        assert answer.status_code == 401
        named = _challenge_params(answer.headers["www-authenticate"])["resource_metadata"]
        origin = server.base_url
        assert named == origin + "/custom/oauth-protected-resource.json"
        for url in (
            named,
            origin + "/.well-known/oauth-protected-resource/mcp",
            origin + "/.well-known/oauth-protected-resource",
        ):
            doc = http.get(url).json()
            assert doc["resource"] == server.url  # §3.3: the resource the client asked about
            assert doc["authorization_servers"] == [server.auth_url]
            assert doc["scopes_supported"] == ["mcp:read"]
            assert _auth_entries(server)[-1]["scopes_supported"] == ["mcp:read"]  # recorded
            assert doc["bearer_methods_supported"] == ["header"]
            # §2: each authorization server is an issuer whose metadata is served
            meta = http.get(_well_known_inserted(server.auth_url, "oauth-authorization-server"))
            _check_server_metadata(meta.json(), server.auth_url, oidc=False)


def test_registration_conforms_to_rfc7591() -> None:
    with _served({}) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        endpoint = flow.meta["registration_endpoint"]
        for method in ("client_secret_basic", "client_secret_post", "none"):
            metadata = {
                "redirect_uris": [REDIRECT],
                "token_endpoint_auth_method": method,
                "client_name": "n",
                "application_type": "native",
            }
            answer = http.post(endpoint, json=metadata)
            assert answer.status_code == 201
            body = answer.json()
            assert body["client_id"]
            assert isinstance(body["client_id_issued_at"], int)
            for name, value in metadata.items():  # §3.2.1: the registered metadata echoed
                assert body[name] == value
            assert ("client_secret" in body) == (method != "none")
            if method != "none":
                assert body["client_secret_expires_at"] == 0
        # §2: an absent method means client_secret_basic
        assert (
            http.post(endpoint, json={"redirect_uris": [REDIRECT]}).json()[
                "token_endpoint_auth_method"
            ]
            == "client_secret_basic"
        )
        # §3.2.2: errors
        for bad, error in (
            ({}, "invalid_redirect_uri"),
            ({"redirect_uris": ["http://example.com/cb"]}, "invalid_redirect_uri"),
            (
                {"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "x"},
                "invalid_client_metadata",
            ),
        ):
            answer = http.post(endpoint, json=bad)
            assert answer.status_code == 400
            assert answer.json()["error"] == error


def test_a_correct_client_gets_through_and_every_step_is_recorded() -> None:
    with _served({}) as (server, http):
        flow = _Flow(server, http)
        token = flow.access_token()
        assert token["token_type"] == "Bearer"
        assert token["refresh_token"]
        answer = flow.mcp(token["access_token"])
        assert answer.status_code == 200
        assert answer.json()["result"]["protocolVersion"] == REVISION
        endpoints = [(e["server"], e["endpoint"], e["outcome"]) for e in _auth_entries(server)]
        assert endpoints == [
            ("resource", "mcp", "no-token"),
            ("resource", "resource-metadata", "ok"),
            ("authorization", "server-metadata", "ok"),
            ("authorization", "register", "ok"),
            ("authorization", "authorize", "ok"),
            ("authorization", "token", "ok"),
            ("resource", "mcp", "ok"),
        ]
        refusal = next(server.transcript.of_kind("refusal"))
        assert (refusal["status"], refusal["rule"], refusal["scripted"]) == (
            401,
            "unauthorized",
            True,
        )


def test_a_registration_can_be_assigned_the_method_the_server_supports() -> None:
    # registration_assigns_method: an unsupported (or absent, client_secret_basic) method
    # gets the first supported one, which the answer names (RFC 7591 §3.2.1); without it,
    # the same registration is refused.
    for assigns, expected in ((True, 201), (False, 400)):
        server_auth = {
            "token_endpoint_auth_methods": ["client_secret_post", "none"],
            "registration_assigns_method": assigns,
        }
        with _served({"authorization_server": server_auth}) as (server, http):
            flow = _Flow(server, http)
            flow.discover()
            answer = http.post(
                flow.meta["registration_endpoint"], json={"redirect_uris": [REDIRECT]}
            )
            assert answer.status_code == expected
            if assigns:
                assert answer.json()["token_endpoint_auth_method"] == "client_secret_post"
                assert answer.json()["client_secret"]
                (entry,) = _auth_entries(server, endpoint="register")
                assert entry["assigned_method"] == "client_secret_post"


def test_a_metadata_document_copy_is_read_not_fetched() -> None:
    # metadata_document_copies: a client ID on a host the mock cannot reach is known from
    # the script's copy; the copy is checked as a fetched document is.
    url = "https://unreachable.invalid/client.json"
    copies = {
        url: {"client_id": url, "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"},
        "https://unreachable.invalid/other.json": {"client_id": url, "redirect_uris": []},
    }
    server_auth = {"client_id_metadata_documents": True, "metadata_document_copies": copies}
    with _served({"authorization_server": server_auth}) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        authorize = flow.meta["authorization_endpoint"]
        query = {"response_type": "code", "redirect_uri": REDIRECT, "state": "s",
                 "code_challenge": "x" * 43, "code_challenge_method": "S256"}  # fmt: skip
        answer = http.get(authorize, params={**query, "client_id": url})
        assert answer.status_code == 302
        other = http.get(authorize, params={**query, "client_id": next(iter(copies)) + "x"})
        assert other.status_code == 400  # no copy: not fetched, refused
        wrong = http.get(
            authorize, params={**query, "client_id": "https://unreachable.invalid/other.json"}
        )
        assert wrong.status_code == 400  # its client_id is not its URL
        (entry, *_) = _auth_entries(server, endpoint="authorize")
        assert entry["metadata_document_copy"] is True


def test_iss_in_the_authorization_response_rfc9207() -> None:
    for mode, expected in (("correct", None), ("wrong", WRONG_ISSUER), ("absent", "")):
        with _served({"authorization_server": {"iss": mode}}) as (server, http):
            flow = _Flow(server, http)
            flow.discover()
            flow.register()
            back = flow.authorize()
            assert back["state"] == "st-1"
            assert back["code"]
            assert back.get("iss", "") == (server.auth_url if expected is None else expected)
            advertised = flow.meta.get("authorization_response_iss_parameter_supported", False)
            assert advertised == (mode != "absent")


def test_iss_normalized_is_the_issuer_with_a_trailing_slash() -> None:
    with _served({"authorization_server": {"iss": "normalized"}}) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        flow.register()
        back = flow.authorize()
        assert flow.meta["issuer"] == server.auth_url
        assert back["iss"] == server.auth_url + "/"
        assert back["iss"] != flow.meta["issuer"]  # equal only once normalised
        assert flow.meta["authorization_response_iss_parameter_supported"] is True
        (entry,) = _auth_entries(server, endpoint="authorize")
        assert entry["iss_mismatch"] is True


def test_iss_advertised_apart_from_the_parameter_sent() -> None:
    # Advertised but left out of the redirect; sent (wrong) though never advertised.
    for mode, advertised, sent in (("absent", True, None), ("wrong", False, WRONG_ISSUER)):
        auth = {"authorization_server": {"iss": mode, "iss_advertised": advertised}}
        with _served(auth) as (server, http):
            flow = _Flow(server, http)
            flow.discover()
            flow.register()
            back = flow.authorize()
            assert back.get("iss") == sent
            said = flow.meta.get("authorization_response_iss_parameter_supported", False)
            assert said is advertised
            # The code is still a good one: refusing it is the client's part.
            assert flow.redeem(back["code"]).status_code == 200


def test_metadata_issuer_mismatch_names_another_issuer() -> None:
    auth = {"authorization_server": {"metadata_issuer": "mismatch"}}
    with _served(auth) as (server, http):
        flow = _Flow(server, http)
        prm = flow.discover()
        # The well-known URL is formed from the resource metadata's issuer, which the
        # document then contradicts.
        assert prm["authorization_servers"] == [server.auth_url]
        assert flow.meta["issuer"] == WRONG_ISSUER
        assert flow.meta["token_endpoint"].startswith(server.auth_url)
        (entry,) = _auth_entries(server, endpoint="server-metadata")
        assert entry["issuer"] == WRONG_ISSUER
    with _served({}) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        assert flow.meta["issuer"] == server.auth_url


# -- PKCE, client authentication, resource, scope --------------------------------------


def test_pkce_is_s256_only_and_really_verified() -> None:
    with _served({}) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        flow.register()
        assert flow.meta["code_challenge_methods_supported"] == ["S256"]
        # No challenge, or the plain method: refused at the authorization endpoint.
        assert flow.authorize(code_challenge=None)["error"] == "invalid_request"
        plain = flow.authorize(code_challenge=flow.verifier, code_challenge_method="plain")
        assert plain["error"] == "invalid_request"
        assert "code" not in plain
        assert flow.authorize(code_challenge_method=None)["error"] == "invalid_request"
        # A wrong verifier: the code is refused (and spent).
        code = flow.authorize()["code"]
        wrong = flow.redeem(code, code_verifier=secrets.token_urlsafe(48))
        assert wrong.status_code == 400
        assert wrong.json()["error"] == "invalid_grant"
        assert flow.redeem(code).json()["error"] == "invalid_grant"
        # The verifier sent as the challenge would pass a plain check: not an S256 one.
        code = flow.authorize(code_challenge=flow.verifier)["code"]
        assert flow.redeem(code).json()["error"] == "invalid_grant"
        assert flow.redeem(flow.authorize()["code"]).status_code == 200


def test_a_server_without_code_challenge_methods_leaves_the_member_out() -> None:
    with _served({"authorization_server": {"code_challenge_methods": None}}) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        assert "code_challenge_methods_supported" not in flow.meta
        # It still works, so a check sees a client that went on regardless.
        flow.register()
        assert flow.redeem(flow.authorize()["code"]).status_code == 200


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
def test_token_endpoint_client_authentication(method: str) -> None:
    with _served({}) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        flow.register(method)
        code = flow.authorize()["code"]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "code_verifier": flow.verifier,
            "resource": server.url,
        }
        other = "client_secret_post" if method == "client_secret_basic" else "client_secret_basic"
        refused = flow.token(form, auth=other)
        assert refused.status_code == 401
        assert refused.json()["error"] == "invalid_client"
        entry = _auth_entries(server, endpoint="token")[-1]
        # The refusal records what the client used and what it registered with.
        assert (entry["client_auth"], entry["registered_auth"]) == (other, method)
        assert flow.token(form, auth=method).status_code == 200
        entry = _auth_entries(server, endpoint="token")[-1]
        assert entry["client_auth"] == entry["registered_auth"] == method
        assert "client_secret" not in entry["params"]


def test_pre_registered_clients() -> None:
    clients = [
        {
            "client_id": "pre-1",
            "client_secret": "s3cret",
            "token_endpoint_auth_method": "client_secret_post",
            "redirect_uris": [REDIRECT],
        }
    ]
    with _served({"clients": clients, "authorization_server": {"registration": False}}) as (
        server,
        http,
    ):
        flow = _Flow(server, http)
        flow.discover()
        assert "registration_endpoint" not in flow.meta
        flow.client_id, flow.secret = "pre-1", "s3cret"
        code = flow.authorize(redirect_uri="http://127.0.0.1:9/callback")["code"]  # any port
        assert _auth_entries(server, endpoint="authorize")[-1]["client_source"] == "pre"
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": "http://127.0.0.1:9/callback",
            "code_verifier": flow.verifier,
        }
        assert flow.token(form, auth="client_secret_post").status_code == 200


def test_an_unknown_client_or_redirect_is_answered_without_a_redirect() -> None:
    with _served({}) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        flow.register()
        url = flow.meta["authorization_endpoint"]
        for params in (
            {"client_id": "nobody", "redirect_uri": REDIRECT},
            {"client_id": flow.client_id, "redirect_uri": "http://127.0.0.1/other"},
        ):
            answer = http.get(url, params={"response_type": "code", **params})
            assert answer.status_code == 400
            assert "location" not in answer.headers


def test_resource_parameter_rfc8707() -> None:
    with _served({}) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        flow.register()
        refused = flow.authorize(resource="http://127.0.0.1:1/elsewhere")
        assert refused["error"] == "invalid_target"
        # Recorded as sent, so a check can judge the client's choice.
        assert _auth_entries(server, endpoint="authorize")[-1]["params"]["resource"].endswith(
            "/elsewhere"
        )
        code = flow.authorize()["code"]
        answer = flow.redeem(code, resource="http://127.0.0.1:1/elsewhere")
        assert answer.json()["error"] == "invalid_target"


def test_resource_mismatch_variant_names_another_resource() -> None:
    with _served({"protected_resource": {"resource": "mismatch"}}) as (server, http):
        flow = _Flow(server, http)
        assert flow.discover()["resource"] == MISMATCHED_RESOURCE != server.url
        # A client that wrongly goes on still gets a token, so a check sees it used.
        flow.register()
        token = flow.redeem(flow.authorize()["code"]).json()["access_token"]
        assert flow.mcp(token).status_code == 200


def test_scope_from_the_challenge_and_scopes_supported() -> None:
    settings = {
        "challenge_scope": "mcp:read",
        "authorization_server": {"scopes_supported": ["mcp:read", "mcp:write"]},
    }
    with _served(settings) as (server, http):
        flow = _Flow(server, http)
        first = http.post(server.url, json=INITIALIZE, headers=ACCEPT)
        assert _challenge_params(first.headers["www-authenticate"])["scope"] == "mcp:read"
        assert _auth_entries(server, endpoint="mcp")[-1]["challenge_scope"] == "mcp:read"
        flow.discover()
        assert flow.meta["scopes_supported"] == ["mcp:read", "mcp:write"]
        flow.register()
        assert flow.authorize(scope="admin")["error"] == "invalid_scope"
        body = flow.redeem(flow.authorize(scope="mcp:read")["code"]).json()
        assert body["scope"] == "mcp:read"


def test_step_up_on_insufficient_scope() -> None:
    settings = {"step_up": {"tools": ["write"], "scope": "mcp:write"}}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "write", "arguments": {}},
    }
    with _served(settings) as (server, http):
        flow = _Flow(server, http)
        token = flow.access_token(scope="mcp:read")["access_token"]
        init = flow.mcp(token)
        assert init.status_code == 200
        headers = {
            "mcp-session-id": init.headers["mcp-session-id"],
            "mcp-protocol-version": REVISION,
        }
        refused = http.post(
            server.url, json=call, headers={**ACCEPT, **headers, "authorization": f"Bearer {token}"}
        )
        assert refused.status_code == 403
        params = _challenge_params(refused.headers["www-authenticate"])
        assert params["error"] == "insufficient_scope"
        assert params["scope"] == "mcp:read mcp:write"
        assert params["resource_metadata"].endswith("/.well-known/oauth-protected-resource/mcp")
        bigger = flow.redeem(flow.authorize(scope=params["scope"])["code"]).json()
        answer = http.post(
            server.url,
            json=call,
            headers={**ACCEPT, **headers, "authorization": f"Bearer {bigger['access_token']}"},
        )
        assert answer.status_code == 200
        assert [e["outcome"] for e in _auth_entries(server, endpoint="mcp")][-2:] == [
            "insufficient_scope",
            "ok",
        ]


def test_step_up_always_refuses_so_retries_can_be_counted() -> None:
    settings = {"step_up": {"tools": ["write"], "scope": "mcp:write", "always": True}}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "write"}}
    with _served(settings) as (server, http):
        flow = _Flow(server, http)
        token = flow.access_token(scope="mcp:write")["access_token"]
        sid = flow.mcp(token).headers["mcp-session-id"]
        for _ in range(2):
            answer = http.post(
                server.url,
                json=call,
                headers={**ACCEPT, "mcp-session-id": sid, "authorization": f"Bearer {token}"},
            )
            assert answer.status_code == 403
        assert len(_auth_entries(server, outcome="insufficient_scope")) == 2


def _request(method: str, id_: int | None = 3, **params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    return message if id_ is None else {**message, "id": id_}


def _token_for(server: HttpMockServer, http: httpx.Client, scope: str) -> str:
    """A token for `scope`, the flow begun with a tools/list (initialize is open here)."""
    flow = _Flow(server, http)
    first = http.post(server.url, json=_request("tools/list"), headers=ACCEPT)
    assert first.status_code == 401
    prm = http.get(_challenge_params(first.headers["www-authenticate"])["resource_metadata"])
    issuer = prm.json()["authorization_servers"][0]
    flow.meta = http.get(_well_known_inserted(issuer, "oauth-authorization-server")).json()
    flow.register()
    answer = flow.redeem(flow.authorize(scope=scope)["code"])
    assert answer.status_code == 200, answer.text
    return str(answer.json()["access_token"])


def test_step_up_per_method_with_open_methods_names_the_needed_scope_alone() -> None:
    settings = {
        "challenge_scope": "mcp:basic",
        "step_up": {
            "methods": {"tools/call": "mcp:write", "*": "mcp:basic"},
            "open_methods": ["initialize", "notifications/*"],
            "union": False,
        },
    }
    call = _request("tools/call", name="write", arguments={})
    with _served(settings) as (server, http):
        # The lifecycle goes through without a token, and no token is looked at.
        init = http.post(server.url, json=INITIALIZE, headers=ACCEPT)
        assert init.status_code == 200
        session = {"mcp-session-id": init.headers["mcp-session-id"]}
        done = http.post(
            server.url, json=_request("notifications/initialized", None), headers=ACCEPT | session
        )
        assert done.status_code == 202
        assert [e["outcome"] for e in _auth_entries(server, endpoint="mcp")] == ["open", "open"]
        # Anything else needs a token, and the method's scope.
        unchallenged = http.post(server.url, json=call, headers=ACCEPT | session)
        assert unchallenged.status_code == 401
        assert _challenge_params(unchallenged.headers["www-authenticate"])["scope"] == "mcp:basic"

        def send(message: Mapping[str, Any], token: str) -> httpx.Response:
            headers = {**ACCEPT, **session, "authorization": f"Bearer {token}"}
            return http.post(server.url, json=dict(message), headers=headers)

        basic = _token_for(server, http, "mcp:basic")
        assert send(_request("tools/list"), basic).status_code == 200
        refused = send(call, basic)
        assert refused.status_code == 403
        params = _challenge_params(refused.headers["www-authenticate"])
        assert (params["error"], params["scope"]) == ("insufficient_scope", "mcp:write")
        assert _auth_entries(server, endpoint="mcp")[-1]["required_scope"] == "mcp:write"
        # A token for the challenged scope alone: the call passes, the listing no longer.
        write = _token_for(server, http, "mcp:write")
        assert send(call, write).status_code == 200
        listing = send(_request("tools/list"), write)
        assert listing.status_code == 403
        assert _challenge_params(listing.headers["www-authenticate"])["scope"] == "mcp:basic"
        both = _token_for(server, http, "mcp:basic mcp:write")
        assert [send(m, both).status_code for m in (_request("tools/list"), call)] == [200, 200]


def test_step_up_per_method_always_refuses_every_checked_request() -> None:
    settings = {
        "step_up": {"methods": {"*": "mcp:admin"}, "open_methods": ["initialize"], "always": True}
    }
    with _served(settings) as (server, http):
        sid = http.post(server.url, json=INITIALIZE, headers=ACCEPT).headers["mcp-session-id"]
        token = _token_for(server, http, "mcp:admin")
        headers = {**ACCEPT, "mcp-session-id": sid, "authorization": f"Bearer {token}"}
        for _ in range(3):
            answer = http.post(server.url, json=_request("tools/list"), headers=headers)
            assert answer.status_code == 403
            assert _challenge_params(answer.headers["www-authenticate"])["scope"] == "mcp:admin"
        assert len(_auth_entries(server, outcome="insufficient_scope")) == 3


def test_step_up_gives_up_after_its_refusals_as_the_official_server_does() -> None:
    settings = {
        "step_up": {
            "methods": {"*": "mcp:admin"},
            "open_methods": ["initialize"],
            "always": True,
            "give_up_after": 2,
        }
    }
    with _served(settings) as (server, http):
        sid = http.post(server.url, json=INITIALIZE, headers=ACCEPT).headers["mcp-session-id"]
        token = _token_for(server, http, "mcp:admin")
        headers = {**ACCEPT, "mcp-session-id": sid, "authorization": f"Bearer {token}"}
        statuses = [
            http.post(server.url, json=_request("tools/list", id_=n), headers=headers)
            for n in range(4, 8)
        ]
    assert [a.status_code for a in statuses] == [403, 403, 410, 410]
    assert "www-authenticate" not in statuses[2].headers  # the end, not a challenge
    assert len(_auth_entries(server, outcome="insufficient_scope")) == 2
    assert len(_auth_entries(server, outcome="test_complete", status=410)) == 2
    rules = [e["rule"] for e in server.transcript.of_kind("refusal") if e["status"] == 410]
    assert rules == ["gave-up", "gave-up"]


@pytest.mark.parametrize(
    "step_up",
    [{"tools": ["write"]}, {"scope": "mcp:write", "methods": {"*": "mcp:basic"}}, {}],
)
def test_a_step_up_needs_tools_with_a_scope_or_methods(step_up: dict[str, Any]) -> None:
    with pytest.raises(ScriptError):
        parse_script(_script({"step_up": step_up}))


def test_refresh_tokens_and_token_expiry() -> None:
    with _served({"token_uses": 1}) as (server, http):
        flow = _Flow(server, http)
        token = flow.access_token()
        assert flow.mcp(token["access_token"]).status_code == 200
        expired = flow.mcp(token["access_token"])
        assert expired.status_code == 401
        assert _challenge_params(expired.headers["www-authenticate"])["error"] == "invalid_token"
        fresh = flow.token(
            {
                "grant_type": "refresh_token",
                "refresh_token": token["refresh_token"],
                "resource": server.url,
            }
        )
        assert fresh.status_code == 200
        assert fresh.json()["refresh_token"] != token["refresh_token"]
        # Rotated: the old refresh token is spent, and presenting it again is recorded so.
        again = flow.token({"grant_type": "refresh_token", "refresh_token": token["refresh_token"]})
        assert again.json()["error"] == "invalid_grant"
        states = [e.get("refresh_token") for e in _auth_entries(server, endpoint="token")]
        assert states == [None, "current", "rotated"]
        # Each token answer is numbered; a use names the answer its token came from, and a
        # rotated-out refresh token the answer that replaced it.
        first, refresh, stale = _auth_entries(server, endpoint="token")
        assert [first["issued"]["grant"], refresh["issued"]["grant"]] == [1, 2]
        assert (refresh["refresh_grant"], stale["replaced_by"]) == (1, 2)
        uses = [
            e["token_grant"] for e in _auth_entries(server, endpoint="mcp") if e["bearer_header"]
        ]
        assert uses == [1, 1]
        assert flow.mcp(fresh.json()["access_token"]).status_code == 200
        assert _auth_entries(server, endpoint="mcp")[-1]["token_grant"] == 2
        flow.token({"grant_type": "refresh_token", "refresh_token": "never-issued"})
        assert _auth_entries(server, endpoint="token")[-1]["refresh_token"] == "unknown"


def test_refresh_tokens_only_with_offline_access() -> None:
    settings = {"authorization_server": {"refresh_tokens": "offline_access"}}
    with _served(settings) as (server, http):
        flow = _Flow(server, http)
        assert "refresh_token" not in flow.access_token(scope="mcp")
        code = flow.authorize(scope="mcp offline_access")["code"]
        assert "refresh_token" in flow.redeem(code).json()


def test_a_token_in_the_query_is_refused_and_recorded() -> None:
    with _served({}) as (server, http):
        flow = _Flow(server, http)
        token = flow.access_token()["access_token"]
        answer = http.post(
            server.url, params={"access_token": token}, json=INITIALIZE, headers=ACCEPT
        )
        assert answer.status_code == 401
        entry = _auth_entries(server, endpoint="mcp")[-1]
        assert entry["token_in_query"]
        assert entry["issued_token_in_query"]
        assert not entry["bearer_header"]


def test_a_token_sent_to_the_authorization_server_is_recorded() -> None:
    with _served({}) as (server, http):
        flow = _Flow(server, http)
        token = flow.access_token()["access_token"]
        http.get(flow.meta["token_endpoint"], headers={"authorization": f"Bearer {token}"})
        entry = _auth_entries(server, server="authorization")[-1]
        assert entry["bearer_header"]
        assert entry["issued_token"]


def test_a_token_this_server_never_issued_is_invalid() -> None:
    with _served({}) as (server, http):
        answer = _Flow(server, http).mcp("forged")
        assert answer.status_code == 401
        assert _challenge_params(answer.headers["www-authenticate"])["error"] == "invalid_token"


@pytest.mark.parametrize("metadata", [True, False])
def test_the_2025_03_26_arrangement(metadata: bool) -> None:
    with _served({"legacy_2025_03_26": {"metadata": metadata}}) as (server, http):
        first = http.post(server.url, json=INITIALIZE, headers=ACCEPT)
        assert first.status_code == 401
        assert "resource_metadata" not in first.headers["www-authenticate"]
        origin = server.base_url
        assert http.get(origin + "/.well-known/oauth-protected-resource/mcp").status_code == 404
        answer = http.get(origin + "/.well-known/oauth-authorization-server")
        flow = _Flow(server, http)
        defaults = {
            name: origin + path
            for name, path in (
                ("authorization_endpoint", "/authorize"),
                ("token_endpoint", "/token"),
                ("registration_endpoint", "/register"),
            )
        }
        lookup = _auth_entries(server, endpoint="server-metadata")[-1]
        assert (lookup["server"], lookup["status"]) == ("authorization", answer.status_code)
        if metadata:
            # The issuer is the MCP server's origin, exactly as the URL was formed from it.
            _check_server_metadata(answer.json(), origin, oidc=False)
            flow.meta = answer.json()
            # Its endpoints are not the defaults, which answer 404 and are recorded.
            assert not set(defaults.values()) & {flow.meta[name] for name in defaults}
            assert http.post(defaults["registration_endpoint"], json={}).status_code == 404
            assert _auth_entries(server)[-1]["endpoint"] == "default-endpoint"
        else:
            assert answer.status_code == 404
            flow.meta = defaults
        flow.register()
        token = flow.redeem(flow.authorize()["code"]).json()["access_token"]
        assert flow.mcp(token).status_code == 200


def test_a_metadata_document_client_id_that_cannot_be_fetched_is_refused() -> None:
    settings = {"authorization_server": {"client_id_metadata_documents": True}}
    with _served(settings) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        assert flow.meta["client_id_metadata_document_supported"] is True
        url = "http://127.0.0.1:1/client.json"  # nothing listens on port 1
        answer = http.get(
            flow.meta["authorization_endpoint"],
            params={"response_type": "code", "client_id": url, "redirect_uri": REDIRECT},
        )
        assert answer.status_code == 400
        entry = _auth_entries(server, endpoint="authorize")[-1]
        assert entry["metadata_document"] == url
        assert entry["metadata_document_error"]
        # Beyond loopback the mock does not go: refused, and said so.
        remote = "https://client.example/client.json"
        answer = http.get(
            flow.meta["authorization_endpoint"],
            params={"response_type": "code", "client_id": remote, "redirect_uri": REDIRECT},
        )
        assert answer.status_code == 400
        assert (
            "loopback URLs only"
            in _auth_entries(server, endpoint="authorize")[-1]["metadata_document_error"]
        )


# -- the script section ------------------------------------------------------------------


def test_auth_is_refused_where_it_cannot_apply() -> None:
    with pytest.raises(ScriptError) as caught:
        parse_script(_script({}, transports=["http", "stdio"]))
    assert caught.value.pointer == "/auth"
    assert 'set "transports": ["http"]' in str(caught.value)
    bad_client = {
        "clients": [{"client_id": "c", "token_endpoint_auth_method": "client_secret_post"}]
    }
    with pytest.raises(ScriptError) as caught:
        parse_script(_script(bad_client))
    assert caught.value.pointer == "/auth/clients/0"
    with pytest.raises(ScriptError) as caught:
        parse_script(_script({"authorization_server": {"iss": "sometimes"}}))
    assert "/auth/authorization_server/iss" in str(caught.value)


def test_serve_refuses_an_auth_script_with_the_way_out() -> None:
    with pytest.raises(ValueError, match="HttpMockServer or serve_http"):
        serve_dev(parse_script(_script({})), "127.0.0.1", 0)


@contextmanager
def _document_server(documents: Mapping[str, Any]) -> Iterator[str]:
    """A loopback HTTP server for client ID metadata documents (path -> JSON, its URL
    filled in for "{url}"); yields its origin."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            doc = documents.get(self.path)
            body = b"" if doc is None else json.dumps(doc).replace("{url}", origin + self.path)
            self.send_response(404 if doc is None else 200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(body.encode() if isinstance(body, str) else body)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield origin
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(10.0)


def test_a_client_id_metadata_document_is_fetched_and_checked() -> None:
    documents = {
        "/good.json": {
            "client_id": "{url}",
            "client_name": "t",
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
        },
        "/other.json": {
            "client_id": "http://127.0.0.1/elsewhere.json",
            "redirect_uris": [REDIRECT],
        },
    }
    settings = {"authorization_server": {"client_id_metadata_documents": True}}
    with _document_server(documents) as origin, _served(settings) as (server, http):
        flow = _Flow(server, http)
        flow.discover()
        flow.client_id = origin + "/good.json"
        assert flow.redeem(flow.authorize()["code"]).status_code == 200
        assert _auth_entries(server, endpoint="authorize")[-1]["metadata_document"] == (
            flow.client_id
        )
        for path in ("/other.json", "/missing.json"):
            answer = http.get(
                flow.meta["authorization_endpoint"],
                params={
                    "response_type": "code",
                    "client_id": origin + path,
                    "redirect_uri": REDIRECT,
                },
            )
            assert answer.status_code == 400
            assert _auth_entries(server, endpoint="authorize")[-1]["metadata_document_error"]


def test_without_a_get_stream_a_get_is_405_before_any_token_check() -> None:
    script = parse_script(_script({}, http={"get": "405"}))
    with (
        HttpMockServer(script, revision=REVISION) as server,
        httpx.Client(timeout=10.0) as http,
    ):
        answer = http.get(server.url, headers={"accept": "text/event-stream"})
        assert answer.status_code == 405
        assert not _auth_entries(server, endpoint="mcp")  # no bearer check, no token use
        assert http.post(server.url, json=INITIALIZE, headers=ACCEPT).status_code == 401


def test_a_move_after_tool_calls_counts_tool_calls_only() -> None:
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "write", "arguments": {}},
    }
    with _served({"migrate_after_calls": 1}) as (server, http):
        flow = _Flow(server, http)
        token = flow.access_token()["access_token"]
        former = flow.meta["issuer"]
        for _ in range(2):  # MCP requests served that call no tool: no move
            flow.mcp(token)
            assert _auth_entries(server, endpoint="mcp")[-1]["outcome"] == "ok"
        assert not _auth_entries(server, endpoint="migration")
        flow.mcp(token, call)  # served, and then the move
        assert _auth_entries(server, endpoint="mcp")[-1]["outcome"] == "ok"
        moved = _auth_entries(server, endpoint="migration")
        assert [(e["former_issuer"], e["issuer"]) for e in moved] == [(former, former + "/as2")]
        assert flow.mcp(token).status_code == 401


def test_a_resource_that_moves_to_another_authorization_server() -> None:
    with _served({"migrate_after": 1}) as (server, http):
        first = _Flow(server, http)
        old = first.access_token()
        former = first.meta["issuer"]
        assert first.mcp(old["access_token"]).status_code == 200  # the one request served
        # Moved: the first server's token is refused, the metadata names the second.
        refused = first.mcp(old["access_token"])
        assert refused.status_code == 401
        assert _challenge_params(refused.headers["www-authenticate"])["error"] == "invalid_token"
        moved = _auth_entries(server, endpoint="migration")
        assert [(e["former_issuer"], e["issuer"]) for e in moved] == [(former, former + "/as2")]
        second = _Flow(server, http)
        prm = second.discover()
        assert prm["authorization_servers"] == [former + "/as2"]
        # The second server's metadata is its own (RFC 8414 §3.3: its issuer, its endpoints).
        _check_server_metadata(second.meta, former + "/as2", oidc=False)
        assert second.meta["token_endpoint"] != first.meta["token_endpoint"]
        # The first server's client id and refresh token are not the second's, and the
        # attempt is recorded.
        second.client_id = first.client_id
        crossed = second.token(
            {"grant_type": "refresh_token", "refresh_token": old["refresh_token"]}
        )
        assert crossed.status_code == 401
        entry = _auth_entries(server, endpoint="token")[-1]
        assert entry["refresh_token_issuer"] == former
        assert entry["client_of_issuer"] == former
        assert entry["issuer"] == former + "/as2"
        second.register()
        new = second.redeem(second.authorize()["code"]).json()["access_token"]
        assert second.mcp(new).status_code == 200
        assert _auth_entries(server, endpoint="mcp")[-1]["token_issuer"] == former + "/as2"
        # And the first server's refresh token still works there (it was never spent).
        first_again = first.token(
            {"grant_type": "refresh_token", "refresh_token": old["refresh_token"]}
        )
        assert first_again.status_code == 200
