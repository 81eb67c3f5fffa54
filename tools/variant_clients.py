"""Variants of the reference client that each do one thing the spec allows and the bundled
clients do not (tools/variants.py runs them). A variant must get the reference client's
verdicts: a difference is a fault of the harness (a check that reads more into the wire
than the spec says, or a script that answers less than a server would), unless the
variant's `ALLOWED` names it (a client that declares less is skipped where it declared
nothing, and sent nothing to judge where it was asked nothing).

Each variant is small on purpose, and reaches into the reference client's private parts:
it is a probe of the harness, not an example of a client. The tests use the ones that
found harness faults (tests/harness/suite/test_mutations.py, tests/harness/suite/test_mutations_utilities.py) and run
every one through a scenario (tests/project/test_tools.py).
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import anyio
import httpx

from harness.clients import ReferenceClient
from harness.clients._contract import ConnectOptions, Target
from harness.clients.reference._http import HttpTransport
from harness.clients.reference._stdio import StdioTransport
from harness.protocol import Notification

ALLOWED: dict[str, frozenset[str]] = {}
"""Variant name -> the statuses its items may take where the reference client's differ."""


class StringIds(ReferenceClient):
    """Request ids are strings ("r1", "r2", ...)."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = (f"r{n}" for n in itertools.count(1))  # type: ignore[assignment]


class DigitStringIds(ReferenceClient):
    """Request ids are strings of digits ("1", "2", ...): another id than the number."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = (str(n) for n in itertools.count(1))  # type: ignore[assignment]


class IdsFromZero(ReferenceClient):
    """Request ids count from 0."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(0)


class IdsFrom2To40(ReferenceClient):
    """Request ids count from 2**40 (beyond 32 bits)."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(2**40)


class _FreeIds:
    """Ids 1 to 4 in turn, passing over any a request in flight (or an open listen) has."""

    def __init__(self, client: ReferenceClient) -> None:
        self._client = client
        self._turn = itertools.cycle(range(1, 5))
        self._beyond = itertools.count(5)

    def __iter__(self) -> _FreeIds:
        return self

    def __next__(self) -> int:
        busy = {*self._client._pending, *self._client._subscriptions}
        for _ in range(4):
            candidate = next(self._turn)
            if candidate not in busy:
                return candidate
        return next(self._beyond)  # all four busy: a fresh one


class ReusesIdsWhenDone(ReferenceClient):
    """At 2026-07-28, uses ids 1 to 4 again and again: ids need only differ among the
    requests in flight then (a retry still gets another id than the request it retries:
    the next in turn)."""

    def __init__(self) -> None:
        super().__init__()
        counting, free = itertools.count(1), _FreeIds(self)
        self._ids = (next(free) if self._modern else next(counting) for _ in itertools.count())


class IdsPerSession(ReferenceClient):
    """Counts its request ids from 1 again in every session it begins (after a 404, with a
    restarted server): RPC-2 binds ids within a session."""

    async def _initialize(self, revision: str) -> None:
        self._ids = itertools.count(1)
        await super()._initialize(revision)


class NegativeIds(ReferenceClient):
    """Request ids count down from -1 (an id is any integer or string)."""

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(-1, -1)


class RichClientInfo(ReferenceClient):
    """Its `clientInfo` carries the optional members too: a title, a description, a
    website and an icon (where the revision has them: unknown members are allowed)."""

    def _client_info(self) -> dict[str, Any]:
        return {
            **super()._client_info(),
            "title": "Reference client (variant)",
            "description": "A variant with every optional member of its implementation info",
            "websiteUrl": "https://example.com/client",
            "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png"}],
        }


class _AtConnect(ReferenceClient):
    """Does `once_connected` as soon as it is connected."""

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        info = await super().connect(target, options)
        await self.once_connected()
        return info

    async def once_connected(self) -> None:
        raise NotImplementedError


class PingsAtConnect(_AtConnect):
    """Pings the server once connected (either party may ping), where ping exists."""

    async def once_connected(self) -> None:
        if not self._modern:
            await self._request("ping")


class SetsLevelAtConnect(_AtConnect):
    """Asks for info-level logs once connected, when the server declares logging."""

    async def once_connected(self) -> None:
        if not self._modern and "logging" in (self._server_capabilities or {}):
            await self._request("logging/setLevel", {"level": "info"})


class ListsAtConnect(_AtConnect):
    """Fetches every list the server declares, all pages, once connected (a cache)."""

    async def once_connected(self) -> None:
        for method, key in self.declared_lists():
            await self._list_all(method, key)

    def declared_lists(self) -> list[tuple[str, str]]:
        """(method, result key) of each list of a capability the server declared."""
        declared = self._server_capabilities or {}
        lists = [
            ("tools", "tools/list", "tools"),
            ("prompts", "prompts/list", "prompts"),
            ("resources", "resources/list", "resources"),
            ("resources", "resources/templates/list", "resourceTemplates"),
        ]
        return [(method, key) for capability, method, key in lists if capability in declared]


class ListsAllAtOnceAtConnect(ListsAtConnect):
    """Fetches every list the server declares once connected, all of them at once (several
    requests in flight, as a client that starts them together and awaits them all)."""

    async def once_connected(self) -> None:
        async with anyio.create_task_group() as together:
            for method, key in self.declared_lists():
                together.start_soon(self._list_all, method, key)


class RootsChangedAtConnect(_AtConnect):
    """Says its roots changed once connected (having loaded its workspace), when it
    declared roots.listChanged."""

    async def once_connected(self) -> None:
        roots = self._capabilities(self._revision).get("roots")
        if isinstance(roots, dict) and roots.get("listChanged"):
            await self._send(Notification("notifications/roots/list_changed").to_json())


class KeepAlivePings(_AtConnect):
    """Pings the server every 200 ms while connected, where ping exists."""

    async def once_connected(self) -> None:
        if self._modern:
            return

        async def pinger() -> None:
            while True:
                await anyio.sleep(0.2)
                try:
                    await self._request("ping", limit=1.0, cancellable=False)
                except Exception:  # closed, or not answered: stop pinging
                    return

        self._tasks.start_soon(pinger)


class ListsBeforeEachCall(ReferenceClient):
    """Lists the tools before every call (as a client that refreshes output schemas)."""

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        with contextlib.suppress(Exception):  # a list that fails does not stop the call
            await self._list_all("tools/list", "tools")
        return await super().call_tool(name, arguments, **kwargs)


class RefetchesOnChange(ReferenceClient):
    """Keeps a cache: fetches a list again (all pages) when the server says it changed,
    and reads a resource again when the server says it was updated, on its own."""

    def __init__(self) -> None:
        super().__init__()
        self._refreshes: list[anyio.Event] = []

    def _dispatch(self, message: Any) -> None:
        super()._dispatch(message)
        if not isinstance(message, Notification):
            return
        params = message.params if isinstance(message.params, dict) else {}
        declared = self._server_capabilities or {}
        if message.method == "notifications/prompts/list_changed" and "prompts" in declared:
            self._in_background(lambda: self._list_all("prompts/list", "prompts"))
        elif message.method == "notifications/resources/list_changed" and "resources" in declared:
            self._in_background(lambda: self._list_all("resources/list", "resources"))
        elif message.method == "notifications/resources/updated" and isinstance(
            params.get("uri"), str
        ):
            uri = params["uri"]
            self._in_background(lambda: self.read_resource(uri))

    def _in_background(self, work: Callable[[], Awaitable[Any]]) -> None:
        done = anyio.Event()
        self._refreshes.append(done)

        async def quietly() -> None:
            try:
                with contextlib.suppress(Exception):  # a refresh that fails changes nothing
                    await work()
            finally:
                done.set()

        self._tasks.start_soon(quietly)

    async def close(self) -> None:
        # A refresh under way belongs to the session: it ends before the session does (on
        # a busy machine the read a notification started was otherwise sent after DELETE).
        with anyio.move_on_after(2.0):
            for done in list(self._refreshes):
                await done.wait()
        await super().close()


class ProgressOnEveryCall(ReferenceClient):
    """Asks for progress notifications on every call."""

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        return await super().call_tool(name, arguments, **{**kwargs, "progress": True})


class OwnMetaKey(ReferenceClient):
    """Every request carries a `_meta` key of its own (reverse-DNS prefixed)."""

    async def _exchange(self, method: str, params: Mapping[str, Any], *args: Any) -> Any:
        meta = {**params.get("_meta", {}), "com.example/trace": "t-1"}
        return await super()._exchange(method, {**params, "_meta": meta}, *args)


class MetaInAnswers(ReferenceClient):
    """Its answers to the server's requests carry a `_meta` of its own (every result may),
    an empty one's too: `{"_meta": {...}}` answers a ping."""

    def _result_for(self, method: str, params: Any) -> dict[str, Any]:
        result = super()._result_for(method, params)
        return {**result, "_meta": {**result.get("_meta", {}), "com.example/trace": "t-1"}}


class EmptyParams(ReferenceClient):
    """A request without parameters carries `"params": {}` (JSON-RPC allows either)."""

    async def connect(self, target: Target, options: ConnectOptions) -> dict[str, Any]:
        info = await super().connect(target, options)
        transport = self._transport
        assert transport is not None
        send = transport.send

        async def with_params(message: Mapping[str, Any], *args: Any) -> None:
            if "method" in message and "id" in message and "params" not in message:
                message = {**message, "params": {}}
            await send(message, *args)

        transport.send = with_params  # type: ignore[method-assign]
        return info


class CancelsWithoutReason(ReferenceClient):
    """Its `notifications/cancelled` carries no `reason` (the member is optional)."""

    async def _cancel(self, request_id: Any, reason: str) -> None:
        if self._modern and isinstance(self._transport, HttpTransport):
            await super()._cancel(request_id, reason)  # closing the stream: no message
            return
        cancelled = Notification("notifications/cancelled", {"requestId": request_id})
        with contextlib.suppress(Exception):
            await self._send(cancelled.to_json(), limit=1.0)


class PingsBeforeInitialized(ReferenceClient):
    """Between the initialize answer and `notifications/initialized`, pings the server
    and takes 300 ms (pings are allowed before initialization is over)."""

    async def _send(self, message: Mapping[str, Any], limit: float | None = None) -> None:
        if message.get("method") == "notifications/initialized":
            await self._request("ping")
            await anyio.sleep(0.3)
        await super()._send(message, limit)


class ExperimentalCapability(ReferenceClient):
    """Declares an experimental capability of its own."""

    def _capabilities(self, revision: str) -> dict[str, Any]:
        return {**super()._capabilities(revision), "experimental": {"com.example/x": {}}}


class ElicitationAsEmptyObject(ReferenceClient):
    """Declares elicitation as `{}` at 2025-11-25 too, which the spec takes for form mode
    only (as `{"form": {}}`, the reference's spelling)."""

    def _capabilities(self, revision: str) -> dict[str, Any]:
        capabilities = super()._capabilities(revision)
        if "elicitation" in capabilities:
            capabilities["elicitation"] = {}
        return capabilities


class LateAnswers(ReferenceClient):
    """Answers the server's requests 300 ms after they come (a user reviewing a sampling
    request, say)."""

    async def _reply(self, reply: Any) -> None:
        await anyio.sleep(0.3)
        await super()._reply(reply)


class AnswersOutOfOrder(ReferenceClient):
    """Answers every other server request 300 ms late, so that answers to requests that
    came together go out in another order (a client that handles them concurrently)."""

    _turn = 0

    async def _reply(self, reply: Any) -> None:
        self._turn += 1
        if self._turn % 2:
            await anyio.sleep(0.3)
        await super()._reply(reply)


class NoClientFeatures(ReferenceClient):
    """Declares no capability and names no client feature to the harness (roots,
    sampling, elicitation, tasks): skipped where those are needed, and not applicable
    where a server request it no longer gets was the condition (an answer's shape)."""

    @property
    def supports(self) -> frozenset[str]:
        return super().supports - {"sampling", "elicitation", "roots", "set_roots", "tasks"}

    def _capabilities(self, revision: str) -> dict[str, Any]:
        return {}


ALLOWED["NoClientFeatures"] = frozenset({"SKIP", "N/A"})


class _RefreshingTransport(HttpTransport):
    _posts = 0

    async def send(self, message: Mapping[str, Any], *args: Any) -> None:
        self._posts += 1
        auth = self.auth
        if auth.access_token and auth._refresh_token is not None and self._posts % 2 == 0:
            await auth._refresh()
        await super().send(message, *args)


class RefreshesEarly(ReferenceClient):
    """Refreshes its access token before every other POST once it has a refresh token
    (renewing ahead of expiry)."""

    _http_transport = _RefreshingTransport


class ConnectionClose(ReferenceClient):
    """Asks for `Connection: close` on every HTTP request: a new TCP connection each time,
    as a client with no connection pool makes."""

    def _default_http_client(self) -> httpx.AsyncClient:
        async def close_after(request: httpx.Request) -> None:
            request.headers["Connection"] = "close"

        client = super()._default_http_client()
        client.event_hooks = {"request": [close_after], "response": []}
        return client


def _reversed_members(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _reversed_members(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed_members(item) for item in value]
    return value


class _Stdin:
    """The server's stdin as the client's transport writes it, a line (one message) per
    send; a subclass writes each line its own way."""

    def __init__(self, stdin: Any) -> None:
        self._stdin = stdin

    async def send(self, line: bytes) -> None:
        await self._stdin.send(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stdin, name)


class _Respelled(_Stdin):
    async def send(self, line: bytes) -> None:
        # One line still: json.dumps without an indent writes no newline.
        spelled = _reversed_members(json.loads(line))
        text = json.dumps(spelled, ensure_ascii=True, separators=(", ", ": "))
        await self._stdin.send(text.encode("ascii") + b"\n")


class _InTwoWrites(_Stdin):
    async def send(self, line: bytes) -> None:
        half = len(line) // 2
        await self._stdin.send(line[:half])
        await anyio.sleep(0.05)
        await self._stdin.send(line[half:])


class _WithStdin:
    """The server process, its stdin wrapped."""

    def __init__(self, process: Any, stdin: type[_Stdin]) -> None:
        self._process = process
        self.stdin = stdin(process.stdin)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._process, name)


def _stdio_writing(stdin: type[_Stdin]) -> type[StdioTransport]:
    """The reference client's stdio transport, writing each line through `stdin`."""

    class Transport(StdioTransport):
        @classmethod
        async def open(cls, *args: Any) -> StdioTransport:
            transport = await super().open(*args)
            transport._process = _WithStdin(transport._process, stdin)  # type: ignore[assignment]
            return transport

    return Transport


class SpelledOutStdio(ReferenceClient):
    """Over stdio, writes its JSON another legal way: members in reverse order (`id` and
    `params` before `jsonrpc`), a space after each comma and colon, and every non-ASCII
    character as a \\u escape."""

    _stdio_transport = _stdio_writing(_Respelled)


class SplitStdioWrites(ReferenceClient):
    """Over stdio, writes each message in two writes 50 ms apart, the first ending
    mid-line (a pipe carries bytes, not messages)."""

    _stdio_transport = _stdio_writing(_InTwoWrites)


class _NoGetTransport(HttpTransport):
    def listen(self) -> None:
        pass


class NoGetStream(ReferenceClient):
    """Never opens the optional GET stream over Streamable HTTP: the server's own messages
    reach it only on the streams of its POSTs. Where the server had nothing to say on
    those, what it would have said is never seen: not applicable, never a failure."""

    _http_transport = _NoGetTransport


ALLOWED["NoGetStream"] = frozenset({"N/A"})


class JavaStyleHttp(ReferenceClient):
    """HTTP as some Java stacks send it: `Content-Type` with a charset, `Accept` with the
    two types reversed and weighted, headers of its own, and pretty-printed JSON bodies
    ending in a newline."""

    def _default_http_client(self) -> httpx.AsyncClient:
        async def restyle(request: httpx.Request) -> None:
            accept = request.headers.get("accept", "")
            if "application/json" in accept and "text/event-stream" in accept:
                request.headers["Accept"] = "text/event-stream;q=0.9, application/json"
            request.headers["User-Agent"] = "Java-http-client/17"
            request.headers["X-Trace-Id"] = "t-1"
            if request.method != "POST" or not request.headers.get("content-type", "").startswith(
                "application/json"
            ):
                return
            pretty = (json.dumps(json.loads(request.content), indent=2) + "\n").encode()
            request.headers["Content-Type"] = "application/json; charset=utf-8"
            request.headers["Content-Length"] = str(len(pretty))
            request.stream = httpx.ByteStream(pretty)
            request._content = pretty

        client = super()._default_http_client()
        client.event_hooks = {"request": [restyle], "response": []}
        return client


class _Pieces(httpx.AsyncByteStream):
    """A body sent in 16-byte pieces, its length not said beforehand."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), 16):
            yield self.body[start : start + 16]


class ChunkedBodies(ReferenceClient):
    """Sends every POST body chunked (`Transfer-Encoding: chunked`, no `Content-Length`),
    as an HTTP stack that streams its request bodies does."""

    def _default_http_client(self) -> httpx.AsyncClient:
        async def chunk(request: httpx.Request) -> None:
            if request.method == "POST" and request.content:
                request.stream = _Pieces(request.content)
                del request.headers["Content-Length"]
                request.headers["Transfer-Encoding"] = "chunked"

        client = super()._default_http_client()
        client.event_hooks = {"request": [chunk], "response": []}
        return client


VARIANTS: Sequence[str] = sorted(
    name
    for name, value in list(globals().items())
    if isinstance(value, type)
    and issubclass(value, ReferenceClient)
    and not name.startswith("_")
    and value is not ReferenceClient
)
