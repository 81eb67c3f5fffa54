"""The reference client's HTTP+SSE transport of 2024-11-05 (HT-13).

GET the URL for an event stream; its first event, `endpoint`, names the URI to POST every
client message to; the server's messages arrive as `message` events on the stream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import anyio
import httpx

from harness.clients._contract import ClientError
from harness.clients.reference._base import BackgroundTasks, Sink, http_error
from harness.clients.reference._http import SSE, close_response, content_type, open_response
from harness.protocol import RequestId, SSEParser, encode

__all__ = ["SseLegacyTransport"]


class SseLegacyTransport:
    def __init__(
        self, client: httpx.AsyncClient, url: str, headers: Mapping[str, str], sink: Sink
    ) -> None:
        self._client = client
        self._url = url
        self._headers = dict(headers)
        self._sink = sink
        self._endpoint: str | None = None
        self._ready = anyio.Event()
        self._error: ClientError | None = None
        self._scope = anyio.CancelScope()

    async def start(self, tasks: BackgroundTasks) -> None:
        """Open the stream and wait for the `endpoint` event (the caller bounds the wait)."""
        tasks.start_soon(self._run)
        await self._ready.wait()
        if self._error is not None:
            raise self._error

    async def _run(self) -> None:
        response: httpx.Response | None = None
        error = ClientError("transport", f"the SSE stream of {self._url} ended")
        try:
            with self._scope:
                request = self._client.build_request(
                    "GET", self._url, headers={**self._headers, "Accept": SSE}
                )
                response = await open_response(self._client, request)
                if not response.is_success or content_type(response) != SSE:
                    body = await response.aread()
                    raise http_error(response.status_code, body, f"GET {self._url}")
                parser = SSEParser()
                async for chunk in response.aiter_bytes():
                    for event in parser.feed(chunk):
                        if event.event == "endpoint" and self._endpoint is None:
                            self._set_endpoint(event.data or "")
                        elif event.data and event.event in (None, "message"):
                            self._sink.deliver(event.data)
        except ClientError as exc:
            error = exc
        except httpx.HTTPError as exc:
            error = ClientError("transport", f"the SSE stream of {self._url} broke: {exc!r}")
        finally:
            if response is not None:
                await close_response(response)
        if self._scope.cancel_called:  # closed by us
            return
        self._error = error
        self._ready.set()
        self._sink.fail(None, error)  # no stream, no responses

    def _set_endpoint(self, data: str) -> None:
        endpoint = urljoin(self._url, data.strip())
        # Messages go where the server says, but never to another origin.
        if urlsplit(endpoint)[:2] != urlsplit(self._url)[:2]:
            raise ClientError("transport", f"the endpoint event names another origin: {endpoint}")
        self._endpoint = endpoint
        self._ready.set()

    async def send(
        self,
        message: Mapping[str, Any],
        headers: Mapping[str, str],
        written: Callable[[], None] | None = None,
    ) -> None:
        # HT-13: every client message is a POST to the endpoint URI (taken as written at
        # once, as over Streamable HTTP).
        if written is not None:
            written()
        if self._endpoint is None:
            raise ClientError("transport", "no endpoint event yet")
        try:
            response = await self._client.post(
                self._endpoint,
                content=encode(message).encode("utf-8"),
                headers={**self._headers, "Content-Type": "application/json"},
            )
        except httpx.HTTPError as exc:
            raise ClientError("transport", f"POST {self._endpoint}: {exc!r}") from exc
        if not response.is_success:
            raise http_error(response.status_code, response.content, f"POST {self._endpoint}")

    def release(self, request_id: RequestId) -> None:
        pass

    async def close(self) -> None:
        self._scope.cancel()
