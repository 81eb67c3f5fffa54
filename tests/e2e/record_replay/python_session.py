"""One fixed client session, run by a real Python client, printed as JSON (stdout's last line).

    python python_session.py CLIENT PLAN TRANSPORT TARGET...

CLIENT is `mcp` (the official Python SDK, mode="auto", what its users run) or `fastmcp`;
PLAN a JSON list of operations (`{"op": "call_tool", "name": ..., "arguments": {...}}`,
`list_tools`, `list_resources`, `read_resource` with `uri`, `list_prompts`, `get_prompt`
with `name` and `arguments`); TRANSPORT `stdio` (TARGET is the command to start), `http`
(Streamable HTTP, TARGET its URL) or `sse` (HTTP+SSE, TARGET the SSE URL). What each
operation surfaced to the application is printed as typed JSON: the client's own result
objects, dumped member by member.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import anyio
from pydantic import BaseModel


def plain(value: Any) -> Any:
    """A client's result as JSON, its types kept as the members they have."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True, by_alias=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"type": type(value).__name__, **fields}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return {"type": type(value).__name__, "repr": repr(value)}


async def run_mcp(plan: list[dict[str, Any]], transport: str, target: list[str]) -> Any:
    from mcp import Client
    from mcp.client.sse import sse_client
    from mcp.client.stdio import StdioServerParameters

    server: Any
    if transport == "stdio":
        server = StdioServerParameters(command=target[0], args=target[1:])
    elif transport == "sse":
        server = sse_client(target[0])
    else:
        server = target[0]
    results = []
    async with Client(server, mode="auto") as client:
        for step in plan:
            op = step["op"]
            if op == "call_tool":
                results.append(await client.call_tool(step["name"], step.get("arguments", {})))
            elif op == "read_resource":
                results.append(await client.read_resource(step["uri"]))
            elif op == "get_prompt":
                results.append(await client.get_prompt(step["name"], step.get("arguments")))
            else:
                results.append(await getattr(client, op)())
        return {"version": client.protocol_version, "results": plain(results)}


async def run_fastmcp(plan: list[dict[str, Any]], transport: str, target: list[str]) -> Any:
    from fastmcp import Client
    from fastmcp.client.transports import SSETransport, StdioTransport, StreamableHttpTransport

    connect: Any
    if transport == "stdio":
        connect = StdioTransport(target[0], target[1:])
    elif transport == "sse":
        connect = SSETransport(target[0])
    else:
        connect = StreamableHttpTransport(target[0])
    results = []
    async with Client(connect) as client:
        for step in plan:
            op = step["op"]
            if op == "call_tool":
                arguments = step.get("arguments", {})
                results.append(
                    await client.call_tool(step["name"], arguments, raise_on_error=False)
                )
            elif op == "read_resource":
                results.append(await client.read_resource(step["uri"]))
            elif op == "get_prompt":
                results.append(await client.get_prompt(step["name"], step.get("arguments")))
            else:
                results.append(await getattr(client, op)())
        return {"version": client.protocol_version, "results": plain(results)}


async def main() -> None:
    client, plan, transport, *target = sys.argv[1:]
    run = {"mcp": run_mcp, "fastmcp": run_fastmcp}[client]
    seen = await run(json.loads(plan), transport, target)
    print(json.dumps(seen, sort_keys=True))


if __name__ == "__main__":
    anyio.run(main)
