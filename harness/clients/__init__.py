"""MCP clients for the harness: the contract every client under test meets (docs/clients.md),
the driver binding for clients in other languages, and the bundled reference client (the
suite's default).

Everything a client author needs is here: `McpClient` (the methods) and `McpClientExtras`
(the optional driver protocol 1.1 operations, named in `supports` from `OPERATIONS`), the
targets a client connects to (`Target`: `StdioTarget`, `HttpTarget`, `SseLegacyTarget`),
`ConnectOptions` with its `Handlers` and `Authorization`, `ClientEvent` for what the client
surfaces, and `ClientError` with its `ErrorKind`s."""

from __future__ import annotations

from harness.clients._contract import (
    FEATURES,
    OPERATIONS,
    Authorization,
    ClientError,
    ClientEvent,
    ConnectOptions,
    ErrorKind,
    Handlers,
    HttpTarget,
    McpClient,
    McpClientExtras,
    SseLegacyTarget,
    StdioTarget,
    Target,
)
from harness.clients._driver import DriverClient, DriverPool
from harness.clients.reference import ReferenceClient

__all__ = [
    "FEATURES",
    "OPERATIONS",
    "Authorization",
    "ClientError",
    "ClientEvent",
    "ConnectOptions",
    "DriverClient",
    "DriverPool",
    "ErrorKind",
    "Handlers",
    "HttpTarget",
    "McpClient",
    "McpClientExtras",
    "ReferenceClient",
    "SseLegacyTarget",
    "StdioTarget",
    "Target",
]
