"""The HTTP mock server (Streamable HTTP, 2026-07-28 stateless HTTP, legacy HTTP+SSE).

The app is in `_http_app` (one Engine behind Starlette), its event streams in
`_http_streams`, the bytes on the wire in `_http_wire`, the header checks in
`_http_headers` and the uvicorn runners in `_http_runner`; this module is their public
face:

    app = create_app(script, revision="2025-11-25")          # in-process (ASGI)
    with HttpMockServer(script, revision="2025-11-25") as s:  # uvicorn on 127.0.0.1
        s.url
    serve_http(script, "127.0.0.1", 8765, ready=print)        # blocking, one run
    serve_dev(script, "127.0.0.1", 8765, ready=print)         # `mcp-testbench serve`:
        # a fresh mock per client session, at the revision the client speaks (Dispatcher)
"""

from __future__ import annotations

from mock_servers.http._app import (
    DEFAULT_ANSWER_TIMEOUT,
    SESSION_NOT_FOUND,
    TRANSPORTS,
    HttpMock,
    create_app,
    mock_of,
)
from mock_servers.http._dispatch import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE, Dispatcher
from mock_servers.http._headers import HEADER_MISMATCH, decode_header_value
from mock_servers.http._runner import (
    AsyncHttpMockServer,
    HttpMockServer,
    check_loopback,
    serve_dev,
    serve_http,
)

__all__ = [
    "DEFAULT_ANSWER_TIMEOUT",
    "DEFAULT_MAX_SESSIONS",
    "DEFAULT_SESSION_IDLE",
    "HEADER_MISMATCH",
    "SESSION_NOT_FOUND",
    "TRANSPORTS",
    "AsyncHttpMockServer",
    "Dispatcher",
    "HttpMock",
    "HttpMockServer",
    "check_loopback",
    "create_app",
    "decode_header_value",
    "mock_of",
    "serve_dev",
    "serve_http",
]
