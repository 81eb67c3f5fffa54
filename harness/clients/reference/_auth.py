"""The reference client's OAuth 2.1 authorization (MCP basic/authorization, 2025-03-26 on).

`OAuthSession` answers the MCP server's 401 and 403 challenges for the HTTP transport:

1. the protected resource metadata (RFC 9728): the `resource_metadata` URL of the
   challenge, else the path-based well-known URL, else the root one; its `resource` must
   be this server (§3.3), or the client stops;
2. the authorization server metadata (RFC 8414 / OpenID Connect Discovery), in the order
   MCP gives (issuer with a path: OAuth inserted, OpenID inserted, OpenID appended;
   without: OAuth, OpenID); its `issuer` must be the one the URL came from (§3.3); with no
   resource metadata at all (a 2025-03-26 server), the MCP origin's own metadata, else
   the default endpoints `/authorize`, `/token`, `/register`;
3. PKCE with S256, and no flow at all when the server does not advertise S256 in
   `code_challenge_methods_supported`;
4. the pre-registered credentials of the connect options (`Authorization`), else
   dynamic client registration (RFC 7591) as a public native client, or with a client
   secret when the server does not allow public clients; at the token endpoint the
   authentication method the registration answered with;
5. the authorization request with `resource` (RFC 8707) and the scope of the challenge,
   else the resource's `scopes_supported`, else none; the browser step done headless
   (the authorization URL fetched without following its redirect, the code read from
   the `Location`); `state` and `iss` (RFC 9207) checked before the code is redeemed;
6. the token request, then the token in the `Authorization` header only;
7. on 401 `invalid_token`: when the resource metadata now names another authorization
   server, everything of the former one is dropped (its client id and tokens never go
   to the new one, nor its tokens to the MCP server) and the flow starts again there;
   else the refresh token first, then a new authorization; on 403
   `insufficient_scope`: a new authorization with the scope the challenge names, once per
   scope (bounded by the caller: `MAX_CHALLENGES` in a row per request).

Every refusal is a ClientError of kind "other" that says which rule the server broke.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit, urlunsplit

import httpx

from harness.clients._contract import Authorization, ClientError

__all__ = ["MAX_CHALLENGES", "REDIRECT_URI", "OAuthSession", "parse_challenge"]

# Nothing listens there: the client reads the code from the redirect, never follows it.
REDIRECT_URI = "http://127.0.0.1:33418/callback"
CLIENT_NAME = "mcp-testbench reference client"
# Without ConnectOptions.authorization (the reference client used on its own).
_DEFAULT_AUTHORIZATION = Authorization(client_name=CLIENT_NAME, redirect_uri=REDIRECT_URI)
MAX_CHALLENGES = 3  # 401/403 answers in a row for one request before giving up


def parse_challenge(value: str) -> dict[str, str]:
    """The parameters of a `Bearer` challenge (RFC 6750 §3); {} for another scheme."""
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return {}
    params: dict[str, str] = {}
    i, n = 0, len(rest)
    while i < n:
        while i < n and rest[i] in " ,":
            i += 1
        start = i
        while i < n and rest[i] not in "= ,":
            i += 1
        name = rest[start:i].lower()
        if i >= n or rest[i] != "=":
            continue
        i += 1
        if i < n and rest[i] == '"':
            i += 1
            chars = []
            while i < n and rest[i] != '"':
                if rest[i] == "\\" and i + 1 < n:
                    i += 1
                chars.append(rest[i])
                i += 1
            i += 1
            params[name] = "".join(chars)
        else:
            start = i
            while i < n and rest[i] != ",":
                i += 1
            params[name] = rest[start:i].strip()
    return params


def _canonical(url: str) -> str:
    parts = urlsplit(url)
    path = parts.path.rstrip("/") if parts.path != "/" else ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def _refuse(text: str) -> ClientError:
    return ClientError("other", f"authorization refused: {text}")


class OAuthSession:
    """The authorization state of one connection to `server_url`."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        server_url: str,
        authorization: Authorization | None = None,
    ) -> None:
        self._http = client
        self.server_url = server_url
        self._given = authorization or _DEFAULT_AUTHORIZATION
        self.access_token: str | None = None
        self._refresh_token: str | None = None
        self._meta: dict[str, Any] = {}
        self._resource: str | None = None
        self._client_id: str | None = None
        self._client_secret: str | None = None
        self._auth_method = "none"
        self._scopes_supported: list[str] = []
        self._stepped_up: set[str] = set()

    def headers(self) -> dict[str, str]:
        """The headers that carry the token (the only place it goes)."""
        return {} if self.access_token is None else {"Authorization": f"Bearer {self.access_token}"}

    async def on_challenge(self, status: int, header: str) -> None:
        """Get a token that answers this 401 or 403 challenge, or raise ClientError."""
        params = parse_challenge(header)
        if status == 403:
            if params.get("error") != "insufficient_scope":
                raise ClientError("transport", "HTTP 403 without an insufficient_scope challenge")
            wanted = params.get("scope", "")
            if not wanted or wanted in self._stepped_up:
                raise _refuse(f"403 insufficient_scope again for scope {wanted!r}: giving up")
            self._stepped_up.add(wanted)
            await self._authorize(params, scope=wanted)
            return
        if status != 401:
            raise ClientError("transport", f"HTTP {status}")
        if self.access_token is not None and await self._server_changed(params):
            self._forget_server()
        elif (
            self.access_token is not None
            and self._refresh_token is not None
            and await self._refresh()
        ):
            return
        await self._authorize(params, scope=params.get("scope"))

    async def _server_changed(self, params: Mapping[str, str]) -> bool:
        """After a 401 to a token: whether the resource metadata now names another
        authorization server than the one the token came from."""
        if self._resource is None:
            return False  # 2025-03-26: the MCP server's origin is its authorization server
        prm = await self._resource_metadata(params)
        servers = (prm or {}).get("authorization_servers")
        if not isinstance(servers, list) or not servers:
            return False
        return bool(servers[0] != self._meta.get("issuer"))

    def _forget_server(self) -> None:
        """Drop everything the former authorization server gave: its metadata, the
        client id it registered, its tokens (none of them goes to another server)."""
        self._meta = {}
        self._client_id = self._client_secret = None
        self._auth_method = "none"
        self.access_token = self._refresh_token = None

    # -- discovery -----------------------------------------------------------------------

    async def _get_json(self, url: str) -> dict[str, Any] | None:
        try:
            response = await self._http.get(url, headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise ClientError("transport", f"GET {url}: {exc!r}") from exc
        if response.status_code != 200:
            return None
        try:
            value = response.json()
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def resource_metadata_urls(self, params: Mapping[str, str]) -> list[str]:
        """Where to look for the resource metadata, in the order MCP gives."""
        parts = urlsplit(self.server_url)
        origin = f"{parts.scheme}://{parts.netloc}"
        urls = [params["resource_metadata"]] if "resource_metadata" in params else []
        path = parts.path.rstrip("/")
        if path:
            urls.append(f"{origin}/.well-known/oauth-protected-resource{path}")
        urls.append(f"{origin}/.well-known/oauth-protected-resource")
        return urls

    async def _resource_metadata(self, params: Mapping[str, str]) -> dict[str, Any] | None:
        for url in self.resource_metadata_urls(params):
            doc = await self._get_json(url)
            if doc is not None:
                return doc
        return None

    def server_metadata_urls(self, issuer: str) -> list[str]:
        """Where to look for the authorization server's metadata, in the order MCP gives."""
        parts = urlsplit(issuer)
        origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path.rstrip("/")
        if path:
            urls = [
                f"{origin}/.well-known/oauth-authorization-server{path}",
                f"{origin}/.well-known/openid-configuration{path}",
                f"{origin}{path}/.well-known/openid-configuration",
            ]
        else:
            urls = [
                f"{origin}/.well-known/oauth-authorization-server",
                f"{origin}/.well-known/openid-configuration",
            ]
        return urls

    async def _server_metadata(self, issuer: str) -> dict[str, Any] | None:
        for url in self.server_metadata_urls(issuer):
            doc = await self._get_json(url)
            if doc is not None:
                if doc.get("issuer") != issuer:
                    raise _refuse(f"the metadata at {url} names issuer {doc.get('issuer')!r}")
                return doc
        return None

    def default_endpoints(self) -> dict[str, Any]:
        """2025-03-26, a server without metadata: the default endpoints at the root of
        the MCP server's origin (its path discarded)."""
        parts = urlsplit(self.server_url)
        origin = f"{parts.scheme}://{parts.netloc}"
        return {
            "issuer": origin,
            "authorization_endpoint": origin + "/authorize",
            "token_endpoint": origin + "/token",
            "registration_endpoint": origin + "/register",
            "code_challenge_methods_supported": ["S256"],
        }

    async def _discover(self, params: Mapping[str, str]) -> None:
        prm = await self._resource_metadata(params)
        if prm is None:
            # 2025-03-26: the MCP server's origin is the authorization server.
            parts = urlsplit(self.server_url)
            origin = f"{parts.scheme}://{parts.netloc}"
            meta = await self._server_metadata(origin)
            self._meta = meta or self.default_endpoints()
            self._resource = None
            return
        resource = prm.get("resource")
        if not isinstance(resource, str) or not self.resource_ok(resource):
            raise _refuse(f"the resource metadata is for {resource!r}, not {self.server_url}")
        servers = prm.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise _refuse("the resource metadata names no authorization server")
        meta = await self._server_metadata(servers[0])
        if meta is None:
            raise _refuse(f"no metadata found for the authorization server {servers[0]}")
        self._meta = meta
        self._resource = resource
        scopes = prm.get("scopes_supported")
        self._scopes_supported = [str(s) for s in scopes] if isinstance(scopes, list) else []

    # -- the flow ------------------------------------------------------------------------

    async def _authorize(self, params: Mapping[str, str], *, scope: str | None) -> None:
        if not self._meta:
            await self._discover(params)
        if not self.pkce_advertised():
            raise _refuse("the authorization server does not advertise PKCE S256")
        if self._client_id is None:
            if self._given.client_id is not None:
                self._pre_registered()
            else:
                await self._register()
        if scope is None and self._scopes_supported:
            scope = " ".join(self._scopes_supported)
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
        state = secrets.token_urlsafe(16)
        query = {
            "response_type": "code",
            "client_id": self._client_id or "",
            "redirect_uri": self._given.redirect_uri,
            "code_challenge": challenge.rstrip(b"=").decode(),
            "code_challenge_method": "S256",
            "state": state,
        }
        if scope:
            query["scope"] = scope
        if self._resource is not None:
            query["resource"] = self._resource
        code = await self._browser_step(query, state)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self._given.redirect_uri,
            "code_verifier": verifier,
        }
        await self._token(form)

    def resource_ok(self, resource: str) -> bool:
        """RFC 9728 §3.3: the metadata is this server's (its resource is our URL)."""
        return _canonical(resource) == _canonical(self.server_url)

    def iss_ok(self, back: Mapping[str, str]) -> bool:
        """RFC 9207: an iss, when sent or advertised, is the issuer's."""
        advertised = self._meta.get("authorization_response_iss_parameter_supported")
        return not ("iss" in back or advertised) or back.get("iss") == self._meta.get("issuer")

    def pkce_advertised(self) -> bool:
        """S256 in code_challenge_methods_supported: without it, no flow at all."""
        methods = self._meta.get("code_challenge_methods_supported")
        return isinstance(methods, list) and "S256" in methods

    async def _browser_step(self, query: Mapping[str, str], state: str) -> str:
        """What a browser and the redirect handler do: the code from the redirect."""
        url = str(self._meta.get("authorization_endpoint", ""))
        try:
            response = await self._http.get(url, params=dict(query), follow_redirects=False)
        except httpx.HTTPError as exc:
            raise ClientError("transport", f"GET {url}: {exc!r}") from exc
        location = response.headers.get("location")
        if response.status_code not in (302, 303) or not location:
            raise _refuse(f"the authorization endpoint answered {response.status_code}")
        back = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
        if back.get("state") != state:
            raise _refuse("the authorization response's state is not ours")
        if not self.iss_ok(back):
            # RFC 9207 §2.4: a wrong or missing iss, and the code is never redeemed.
            raise _refuse(
                f"the authorization response's iss {back.get('iss')!r} is not "
                f"{self._meta.get('issuer')!r}"
            )
        if "error" in back:
            raise _refuse(f"{back['error']}: {back.get('error_description', '')}")
        if "code" not in back:
            raise _refuse("the authorization response has no code")
        return str(back["code"])

    def _pre_registered(self) -> None:
        """The credentials given with the connect options, instead of a registration: a
        secret goes in the Authorization header (client_secret_basic, what RFC 6749 §2.3.1
        makes every server accept), no secret makes a public client."""
        self._client_id = self._given.client_id
        self._client_secret = self._given.client_secret
        self._auth_method = "none" if self._client_secret is None else "client_secret_basic"

    def token_auth_method(self) -> str:
        """How to authenticate at the token endpoint: as a public client (`none`) when
        the server allows it, else the first secret-based method it supports (RFC 8414
        token_endpoint_auth_methods_supported; without the member, a public client)."""
        supported = self._meta.get("token_endpoint_auth_methods_supported")
        if not isinstance(supported, list):
            return "none"
        for method in ("none", "client_secret_basic", "client_secret_post"):
            if method in supported:
                return method
        raise _refuse(f"no token endpoint authentication method this client has: {supported}")

    def registration_metadata(self) -> dict[str, Any]:
        """The client metadata sent to the registration endpoint (RFC 7591 §2)."""
        return {
            "client_name": self._given.client_name,
            "redirect_uris": [self._given.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": self.token_auth_method(),
        }

    async def _register(self) -> None:
        endpoint = self._meta.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise _refuse("no registration endpoint, and no client credentials were given")
        body = self.registration_metadata()
        try:
            response = await self._http.post(endpoint, json=body)
            answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ClientError("transport", f"POST {endpoint}: {exc!r}") from exc
        if response.status_code not in (200, 201) or not isinstance(answer, dict):
            raise _refuse(f"registration answered {response.status_code}")
        self._client_id = str(answer.get("client_id", ""))
        secret = answer.get("client_secret")
        self._client_secret = secret if isinstance(secret, str) else None
        # The server may register another method than asked (RFC 7591 §3.2.1): its
        # answer is what the token endpoint expects.
        self._auth_method = str(
            answer.get("token_endpoint_auth_method", body["token_endpoint_auth_method"])
        )

    async def _token(self, form: dict[str, str]) -> bool:
        """Redeem `form` at the token endpoint; False when the server refused it."""
        if self._resource is not None:
            form["resource"] = self._resource
        headers: dict[str, str] = {}
        if self._auth_method == "client_secret_basic" and self._client_secret is not None:
            pair = f"{self._client_id}:{self._client_secret}".encode()
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode()
        else:
            form["client_id"] = self._client_id or ""
            if self._auth_method == "client_secret_post" and self._client_secret is not None:
                form["client_secret"] = self._client_secret
        endpoint = str(self._meta.get("token_endpoint", ""))
        try:
            response = await self._http.post(endpoint, data=form, headers=headers)
            answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ClientError("transport", f"POST {endpoint}: {exc!r}") from exc
        if response.status_code != 200 or not isinstance(answer, dict):
            if form["grant_type"] == "refresh_token":
                return False
            raise _refuse(f"the token endpoint answered {response.status_code}: {answer}")
        self.access_token = str(answer.get("access_token", ""))
        refresh = answer.get("refresh_token")
        if isinstance(refresh, str):
            self._refresh_token = refresh
        return True

    async def _refresh(self) -> bool:
        token, self._refresh_token = self._refresh_token, None
        return token is not None and await self._token(
            {"grant_type": "refresh_token", "refresh_token": token}
        )
