"""MCP clients for the harness: the contract every client under test meets, and the
bundled reference client (the suite's default)."""

from __future__ import annotations

from harness.clients._contract import (
    FEATURES,
    OPERATIONS,
    Authorization,
    ClientError,
    ClientEvent,
    ConnectOptions,
    Handlers,
    HttpTarget,
    McpClient,
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
    "Handlers",
    "HttpTarget",
    "McpClient",
    "ReferenceClient",
    "SseLegacyTarget",
    "StdioTarget",
    "Target",
]
