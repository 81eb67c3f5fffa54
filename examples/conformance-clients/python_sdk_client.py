"""A conformance client in the official runner's convention, on the official Python SDK (`mcp`).

The official runner (`@modelcontextprotocol/conformance`) and `mcp-testbench run
--conformance-client` start it the same way, once per client scenario:

    /bin/sh -c "python examples/conformance-clients/python_sdk_client.py <server URL>"

with the scenario's name in MCP_CONFORMANCE_SCENARIO and the revision in
MCP_CONFORMANCE_PROTOCOL_VERSION; it does what that scenario's server expects and exits 0.

`--defect NAME` (before the URL) makes a variant with one defect, to show that the runner
and mcp-testbench fail the same scenario for it:

    string-arguments     tools_call: calls add_numbers with "5" and "3" (strings, not numbers)
    decline-elicitation  elicitation-sep1034-client-defaults: declines instead of accepting
    no-reconnect         sse-retry: never reconnects after the server closes the call's
                         stream (plain HTTP, no SDK: the SDK always reconnects)
    early-reconnect      sse-retry: reconnects at once, ignoring the 500 ms `retry` field
                         (plain HTTP, no SDK)
    no-client-version    initialize: clientInfo without a version
    no-version-header    sse-retry: does it all right (plain HTTP), but never sends the
                         MCP-Protocol-Version header: the runner's checks pass, the suite's
                         http.protocol-version-header fails (a finding only the wire shows)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from typing import Any

SCENARIOS = ("initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry")
DEFECTS = (
    "string-arguments",
    "decline-elicitation",
    "no-reconnect",
    "early-reconnect",
    "no-client-version",
    "no-version-header",
)


def log(text: str) -> None:
    # stdout and stderr are kept by the runner (stdout.txt, stderr.txt) and by mcp-testbench.
    print(f"python-sdk-client: {text}", file=sys.stderr, flush=True)


def mode_for(revision: str) -> str:
    """The SDK's connect mode for the revision the scenario runs at."""
    return "2026-07-28" if revision >= "2026-07-28" else "legacy"


def defaults_of(schema: dict[str, Any]) -> dict[str, Any]:
    """Every property's default: what a form left untouched returns (SEP-1034)."""
    properties = schema.get("properties") or {}
    return {name: p["default"] for name, p in properties.items() if "default" in p}


async def with_sdk(scenario: str, url: str, revision: str, defect: str | None) -> None:
    import mcp_types
    from mcp import Client

    async def elicitation(context: Any, params: Any) -> mcp_types.ElicitResult:
        if defect == "decline-elicitation":
            return mcp_types.ElicitResult(action="decline")
        schema = params.requested_schema if hasattr(params, "requested_schema") else {}
        content = defaults_of(schema if isinstance(schema, dict) else {})
        log(f"elicitation: accepting with the defaults {json.dumps(content)}")
        return mcp_types.ElicitResult(action="accept", content=content)

    version = "" if defect == "no-client-version" else "1.0.0"
    info = mcp_types.Implementation(name="python-sdk-conformance-client", version=version)
    async with Client(
        url,
        mode=mode_for(revision),  # type: ignore[arg-type]
        elicitation_callback=elicitation,
        client_info=info,
    ) as client:
        if scenario == "initialize":
            log(f"initialized: {client.protocol_version}")
        elif scenario == "tools_call":
            tools = await client.list_tools()
            log(f"tools: {[tool.name for tool in tools.tools]}")
            arguments: dict[str, Any] = {"a": 5, "b": 3}
            if defect == "string-arguments":
                arguments = {"a": "5", "b": "3"}
            result = await client.call_tool("add_numbers", arguments)
            log(f"add_numbers: {result.model_dump(mode='json', exclude_none=True)}")
        elif scenario == "elicitation-sep1034-client-defaults":
            result = await client.call_tool("test_client_elicitation_defaults", {})
            log(f"elicitation tool: {result.model_dump(mode='json', exclude_none=True)}")
        elif scenario == "sse-retry":
            result = await client.call_tool("test_reconnection", {})
            log(f"test_reconnection: {result.model_dump(mode='json', exclude_none=True)}")


def raw_sse_retry(url: str, revision: str, defect: str) -> None:
    """sse-retry by hand (the SDK always reconnects, and waits `retry`): initialize, call
    the tool, read its stream to the server's close, then reconnect at once, never, or
    after the retry (without the version header)."""
    import httpx

    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    with httpx.Client(timeout=10) as http:
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": revision,
                "capabilities": {},
                "clientInfo": {"name": "raw-conformance-client", "version": "1.0.0"},
            },
        }
        answer = http.post(url, json=initialize, headers=headers)
        session = answer.headers.get("mcp-session-id")
        if session:
            headers["mcp-session-id"] = session
        if defect != "no-version-header":
            headers["mcp-protocol-version"] = revision
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        http.post(url, json=initialized, headers=headers)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "test_reconnection", "arguments": {}},
        }
        last_id = None
        with http.stream("POST", url, json=call, headers=headers) as stream:
            for line in stream.iter_lines():
                if line.startswith("id:"):
                    last_id = line[3:].strip()
        log(f"the call's stream ended (last event id {last_id!r})")
        if defect == "no-reconnect":
            return
        if defect == "no-version-header":
            time.sleep(0.6)  # the retry field said 500 ms
        get_headers = {**headers, "accept": "text/event-stream"}
        if last_id is not None:
            get_headers["last-event-id"] = last_id
        with http.stream("GET", url, headers=get_headers) as stream:
            deadline = time.monotonic() + 5
            for line in stream.iter_lines():
                if '"result"' in line or time.monotonic() > deadline:
                    log(f"reconnected: {line}")
                    break


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--defect", choices=DEFECTS, help="the one defect of this variant")
    parser.add_argument("url", help="the scenario's server URL (the runner's last argument)")
    args = parser.parse_args(argv)
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    revision = os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "2025-11-25")
    log(f"scenario {scenario!r} at {revision}, server {args.url}, defect {args.defect}")
    if scenario not in SCENARIOS:
        # The runner runs every scenario of a set (authorization too): say so, and fail it.
        log(f"this client does not implement the scenario {scenario!r}")
        return 1
    if scenario == "sse-retry" and args.defect in (
        "no-reconnect",
        "early-reconnect",
        "no-version-header",
    ):
        raw_sse_retry(args.url, revision, args.defect)
    else:
        asyncio.run(with_sdk(scenario, args.url, revision, args.defect))
    return 0


if __name__ == "__main__":
    sys.exit(main())
