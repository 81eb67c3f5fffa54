"""The reference client: a complete MCP client over stdio, Streamable HTTP, the 2026-07-28
stateless HTTP and the legacy HTTP+SSE transport, with OAuth 2.1; the suite's default client
and the model every check is first proved on.

`_client` is the client the contract sees; `_base` the JSON-RPC session every transport shares;
`_stdio`, `_http` and `_sse_legacy` the transports; `_auth` the authorization flow.
"""

from __future__ import annotations

from harness.clients.reference._client import ReferenceClient

__all__ = [
    "ReferenceClient",
]
