"""MCP clients for the harness: the contract every client under test meets, and the
bundled reference client (the suite's default)."""

from __future__ import annotations

from harness.clients._contract import (
    FEATURES,
    Authorization,
    ClientError,
    ClientEvent,
    ConnectOptions,
    Handlers,
    HttpTarget,
    McpClient,
    SseLegacyTarget,
    StdioTarget,
)
from harness.clients._reference import ReferenceClient

__all__ = [
    "FEATURES",
    "Authorization",
    "ClientError",
    "ClientEvent",
    "ConnectOptions",
    "Handlers",
    "HttpTarget",
    "McpClient",
    "ReferenceClient",
    "SseLegacyTarget",
    "StdioTarget",
]
