"""The reference client's Streamable HTTP transport (2025-03-26 and later, 2026-07-28 too).

One POST per message; the answer is JSON or an SSE stream. The handshake revisions add a
session (`Mcp-Session-Id`), a GET stream, resumption and DELETE; 2026-07-28 drops all four
and mirrors body fields into headers instead (`modern_headers`, `param_headers`).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import Any

import anyio
import httpx

from harness.clients._contract import Authorization, ClientError
from harness.clients.reference._auth import MAX_CHALLENGES, OAuthSession
from harness.clients.reference._base import (
    BackgroundTasks,
    SessionExpiredError,
    Sink,
    StreamBrokenError,
    http_error,
)
from harness.protocol import RequestId, SSEParser, encode

__all__ = ["HttpTransport", "header_value", "modern_headers", "param_headers"]

ACCEPT_BOTH = "application/json, text/event-stream"  # HT-2, HM-1
SSE = "text/event-stream"
_MAX_RESUME = 3  # reconnections in a row that bring no event
_DEFAULT_RETRY_MS = 250  # when the server gave no `retry`

ParamHeaders = Sequence[tuple[tuple[str, ...], str]]


def content_type(response: httpx.Response) -> str:
    return str(response.headers.get("content-type", "")).split(";")[0].strip().lower()


async def open_response(client: httpx.AsyncClient, request: httpx.Request) -> httpx.Response:
    try:
        return await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        raise ClientError("transport", f"{request.method} {request.url}: {exc!r}") from exc


async def close_response(response: httpx.Response) -> None:
    with anyio.CancelScope(shield=True), anyio.move_on_after(2), suppress(httpx.HTTPError):
        await response.aclose()


class HttpTransport:
    auth_session: type[OAuthSession] = OAuthSession
    max_challenges = MAX_CHALLENGES

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        headers: Mapping[str, str],
        sink: Sink,
        tasks: BackgroundTasks,
        authorization: Authorization | None = None,
    ) -> None:
        self._client = client
        self._url = url
        self._headers = dict(headers)
        self._sink = sink
        self._tasks = tasks
        self.modern = False
        """2026-07-28: no session, no GET stream, no resumption, no DELETE (HM-5)."""
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        """The negotiated revision, sent on every request after initialize (HT-11)."""
        self._streams: dict[RequestId, anyio.CancelScope] = {}
        self._listener: anyio.CancelScope | None = None
        self.auth = self.auth_session(client, url, authorization)
        """Answers the server's 401/403 challenges; its token goes on every request."""

    def post_url(self) -> str:
        """Where messages are POSTed: the endpoint (tests break this on purpose)."""
        return self._url

    def _request_headers(
        self, accept: str, extra: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        headers = {**self._headers, **self.auth.headers(), "Accept": accept}
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id  # HT-8
        if self.protocol_version is not None:
            headers["MCP-Protocol-Version"] = self.protocol_version  # HT-11
        headers.update(extra or {})
        return headers

    async def send(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        written: Callable[[], None] | None = None,
    ) -> None:
        # HT-1: every message is a POST of its own. Whether a POST cut short by a
        # cancellation reached the server is not known here: taken as written at once.
        if written is not None:
            written()
        request_id = message.get("id") if "method" in message else None
        method = message.get("method", "response")
        with_session = self.session_id is not None
        response: httpx.Response | None = None
        for attempt in range(self.max_challenges + 1):
            post = self._client.build_request(
                "POST",
                self.post_url(),
                content=encode(message).encode("utf-8"),
                headers={
                    **self._request_headers(ACCEPT_BOTH, headers),
                    "Content-Type": "application/json",
                },
            )
            response = await open_response(self._client, post)
            if response.status_code not in (401, 403) or attempt == self.max_challenges:
                break  # the last challenge is the caller's error (below)
            # Authorization: answer the challenge, then send the message again.
            challenge = response.headers.get("www-authenticate", "")
            await close_response(response)
            await self.auth.on_challenge(response.status_code, challenge)
        assert response is not None
        try:
            if response.status_code == 404 and with_session:
                self.session_id = self.protocol_version = None
                raise SessionExpiredError()  # HT-9: the caller starts a new session
            if not response.is_success:
                body = await response.aread()
                raise http_error(response.status_code, body, f"POST {method}")
            if method == "initialize":
                self.session_id = response.headers.get("mcp-session-id")  # HT-8
            if request_id is None or response.status_code == 202:
                return  # HT-4: notifications and responses get 202 and no body
            kind = content_type(response)
            if kind == SSE:  # HT-3: read the stream in the background
                scope = self._streams[request_id] = anyio.CancelScope()
                if self._tasks.start_soon(self._follow, response, request_id, scope):
                    response = None
            elif kind == "application/json":
                self._sink.deliver(await response.aread())
                if self._sink.pending(request_id):
                    raise ClientError("transport", f"the JSON answer to {method} holds no response")
            else:
                raise ClientError("transport", f"POST {method}: unexpected Content-Type {kind!r}")
        except httpx.HTTPError as exc:
            raise ClientError("transport", f"POST {method}: {exc!r}") from exc
        finally:
            if response is not None:
                await close_response(response)

    def release(self, request_id: RequestId) -> None:
        # Closing the response stream; in 2026-07-28 this is the cancellation (HM-5).
        scope = self._streams.pop(request_id, None)
        if scope is not None:
            scope.cancel()

    def listen(self) -> None:
        """HT-6: open the optional GET stream for server-initiated messages."""
        if self._listener is not None:
            self._listener.cancel()
        scope = self._listener = anyio.CancelScope()
        self._tasks.start_soon(self._follow, None, None, scope)

    async def _get(self, last_event_id: str | None) -> httpx.Response | None:
        headers = self._request_headers(SSE)  # HT-6: Accept lists text/event-stream
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id  # HT-7
        request = self._client.build_request("GET", self._url, headers=headers)
        response = await open_response(self._client, request)
        if response.is_success and content_type(response) == SSE:
            return response
        await close_response(response)
        # 405: the server offers no GET stream, which it may (HT-6).
        self._sink.log(f"GET {self._url}: HTTP {response.status_code}, no stream")
        return None

    async def _follow(
        self,
        response: httpx.Response | None,
        request_id: RequestId | None,
        scope: anyio.CancelScope,
    ) -> None:
        """Read an SSE stream (a POST's, or the GET stream when `request_id` is None).

        HT-7: a stream that ends before its response is resumed with GET and
        `Last-Event-ID`, after the `retry` delay the server asked for; 2026-07-28 has no
        resumption, so the request fails for the caller to re-issue (HM-5).
        """
        parser = SSEParser()
        failures = 0
        try:
            with scope:
                if response is None:
                    response = await self._get(None)
                while response is not None:
                    progressed = await self._read(response, parser, request_id)
                    await close_response(response)
                    response = None
                    if request_id is not None and not self._sink.pending(request_id):
                        return
                    failures = 0 if progressed else failures + 1
                    last_id = parser.last_event_id
                    if self.modern or not last_id or failures > _MAX_RESUME:
                        break
                    retry = parser.retry if parser.retry is not None else _DEFAULT_RETRY_MS
                    await anyio.sleep(self._retry_delay(retry))  # HT-7: MUST respect `retry`
                    response = await self._get(last_id)
                    parser = SSEParser(last_event_id=last_id)
                    parser.retry = retry
                if request_id is not None:
                    self._sink.fail(request_id, StreamBrokenError("it ended before the response"))
        except ClientError as exc:
            if request_id is not None:
                self._sink.fail(request_id, exc)
        finally:
            if response is not None:
                await close_response(response)
            if request_id is not None:
                self._streams.pop(request_id, None)

    def _retry_delay(self, retry_ms: int) -> float:
        """Seconds to wait before reconnecting: the server's `retry` (HT-7)."""
        return retry_ms / 1000

    async def _read(
        self, response: httpx.Response, parser: SSEParser, request_id: RequestId | None
    ) -> bool:
        """Deliver the stream's messages until it ends or answers `request_id`: any events?"""
        progressed = False
        try:
            async for chunk in response.aiter_bytes():
                for event in parser.feed(chunk):
                    progressed = True
                    # Priming events carry an id and empty data; comments are no events.
                    if event.data and event.event in (None, "message"):
                        self._sink.deliver(event.data)
                if request_id is not None and not self._sink.pending(request_id):
                    break
        except httpx.HTTPError as exc:  # a broken connection, not a cancellation (HT-5)
            self._sink.log(f"SSE stream broke: {exc!r}")
        return progressed

    async def close(self) -> None:
        for scope in (self._listener, *self._streams.values()):
            if scope is not None:
                scope.cancel()
        if self.session_id is None or self.modern:
            return
        # HT-10: end the session; 405 means the server does not let clients do so.
        request = self._client.build_request(
            "DELETE", self._url, headers=self._request_headers(ACCEPT_BOTH)
        )
        with suppress(ClientError):
            await close_response(await open_response(self._client, request))


# 2026-07-28 request metadata headers (HM-2, HM-3, HM-4) -------------------------------

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # RFC 9110 field-name token
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
_DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples"})  # values, not schemas


def header_value(value: str) -> str:
    """HM-3: `value` as a header value, as `=?base64?...?=` unless it is plain visible ASCII.

    Control characters, non-ASCII, leading or trailing whitespace, and plain values that
    look like the sentinel themselves are all sent encoded.
    """
    plain = (
        all(" " <= char <= "~" for char in value)
        and value == value.strip()
        and not (value.startswith("=?base64?") and value.endswith("?="))
    )
    if plain:
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def param_headers(schema: Any) -> ParamHeaders:
    """HM-4: the (property path, header name) pairs that `x-mcp-header` declares.

    Raises ValueError, with the reason, for a declaration the spec makes invalid: an empty
    name or one that is not an HTTP token, a name used twice (ignoring case), a property
    that is not a string, integer or boolean, or one reached other than through a chain of
    `properties` (items, oneOf, $ref...).
    """
    found: list[tuple[tuple[str, ...], str]] = []

    def walk(node: Any, path: tuple[str, ...], static: bool) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, path, False)
            return
        if not isinstance(node, dict):
            return
        if "x-mcp-header" in node:
            name = node["x-mcp-header"]
            if not static or not path:
                raise ValueError(
                    f"x-mcp-header {name!r} is not on a property reached by properties"
                )
            if not isinstance(name, str) or not _TOKEN.fullmatch(name):
                raise ValueError(f"x-mcp-header {name!r} is not an HTTP token")
            kind = node.get("type")
            kinds = {k for k in (kind if isinstance(kind, list) else [kind]) if isinstance(k, str)}
            if not (kinds - {"null"}) or not kinds <= _HEADER_TYPES | {"null"}:
                raise ValueError(f"x-mcp-header {name!r} is on a property of type {kind!r}")
            if any(name.lower() == other.lower() for _, other in found):
                raise ValueError(f"x-mcp-header {name!r} is declared twice")
            found.append((path, name))
        for key, value in node.items():
            if key in _DATA_KEYWORDS:
                continue
            if key == "properties" and isinstance(value, dict):
                for prop, sub in value.items():
                    walk(sub, (*path, prop), static)
            else:
                walk(value, path, False)

    walk(schema, (), True)
    return found


def _header_text(value: Any) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return str(value)
    return None  # null or absent: no header (HM-4)


def modern_headers(
    version: str, method: str, params: Mapping[str, Any], declared: ParamHeaders
) -> dict[str, str]:
    """The headers a 2026-07-28 POST carries besides Accept and Content-Type."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}  # HM-2, HM-3
    source = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method)
    if source is not None and isinstance(params.get(source), str):
        headers["Mcp-Name"] = header_value(params[source])
    arguments = params.get("arguments")
    for path, name in declared:  # HM-4: mirror the designated arguments
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        text = _header_text(value)
        if text is not None:
            headers[f"Mcp-Param-{name}"] = header_value(text)
    return headers
