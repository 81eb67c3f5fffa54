"""Codec throughput: messages per second for parse, classify and validate.

    python benchmarks/codec.py [--messages N] [--repeat R]

Runs on a mixed corpus of client and server messages (requests, notifications, results,
errors; small and large), and prints, beside each stage of mcp-testbench, the baseline a
hand-rolled checker would use: plain `json.loads`, and `json.loads` plus `jsonschema`
validation of every message against the JSON-RPC message union of the same schema
document. A benchmark, not a test: it asserts nothing and never runs in the test suite.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import jsonschema

from harness.protocol import classify, parse, schema_document, validate

REVISION = "2025-11-25"


def corpus(size: int) -> list[tuple[bytes, str, str | None]]:
    """(bytes, direction, method answered) triples: a realistic mix, ids varied."""
    big_text = "lorem ipsum " * 400
    templates: list[tuple[dict[str, Any], str, str | None]] = [
        (
            {
                "method": "initialize",
                "params": {
                    "protocolVersion": REVISION,
                    "capabilities": {"roots": {"listChanged": True}, "sampling": {}},
                    "clientInfo": {"name": "bench", "version": "1.0"},
                },
            },
            "client",
            None,
        ),
        ({"method": "notifications/initialized"}, "client", None),
        ({"method": "tools/list", "params": {"cursor": "page-2"}}, "client", None),
        (
            {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}}},
            "client",
            None,
        ),
        ({"method": "ping"}, "client", None),
        (
            {"method": "notifications/cancelled", "params": {"requestId": 3, "reason": "timeout"}},
            "client",
            None,
        ),
        (
            {
                "result": {
                    "tools": [
                        {
                            "name": f"tool{i}",
                            "description": "does things",
                            "inputSchema": {
                                "type": "object",
                                "properties": {"x": {"type": "string"}},
                            },
                        }
                        for i in range(20)
                    ]
                }
            },
            "server",
            "tools/list",
        ),
        (
            {"result": {"content": [{"type": "text", "text": big_text}], "isError": False}},
            "server",
            "tools/call",
        ),
        ({"error": {"code": -32602, "message": "Unknown tool: x"}}, "server", "tools/call"),
        (
            {"method": "notifications/progress", "params": {"progressToken": "t", "progress": 0.5}},
            "server",
            None,
        ),
    ]
    out = []
    for n in range(size):
        body, direction, answered = templates[n % len(templates)]
        message: dict[str, Any] = {"jsonrpc": "2.0", **body}
        if "method" in body and not body["method"].startswith("notifications/"):
            message["id"] = n
        elif "result" in body or "error" in body:
            message["id"] = f"req-{n}"
        out.append((json.dumps(message).encode(), direction, answered))
    return out


def rate(label: str, items: int, run: Callable[[], None], repeat: int) -> None:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    best = min(times)
    print(
        f"  {label:<52} {items / best:>12,.0f} msg/s   (median {items / statistics.median(times):,.0f})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    data = corpus(args.messages)
    decoded = [json.loads(raw) for raw, _, _ in data]
    print(
        f"mcp-testbench codec benchmark: {args.messages} messages, best of {args.repeat}, "
        f"Python {platform.python_version()} on {platform.machine()}"
    )

    document = schema_document(REVISION)
    plain = jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/JSONRPCMessage", "$defs": document["$defs"]}
    )

    def baseline_loads() -> None:
        for raw, _, _ in data:
            json.loads(raw)

    def baseline_loads_validate() -> None:
        for raw, _, _ in data:
            plain.is_valid(json.loads(raw))

    def our_parse() -> None:
        for raw, _, _ in data:
            parse(raw)

    def our_classify() -> None:
        for value in decoded:
            classify(value)

    def our_validate() -> None:
        for value, (_, direction, answered) in zip(decoded, data, strict=True):
            validate(value, REVISION, direction, request_method=answered)  # type: ignore[arg-type]

    print("baseline")
    rate("json.loads", len(data), baseline_loads, args.repeat)
    rate(
        "json.loads + jsonschema (JSON-RPC message union)",
        len(data),
        baseline_loads_validate,
        args.repeat,
    )
    print("mcp-testbench")
    rate("parse (bytes -> typed message)", len(data), our_parse, args.repeat)
    rate("classify (decoded JSON -> typed message)", len(data), our_classify, args.repeat)
    rate(f"validate ({REVISION}, by direction and method)", len(data), our_validate, args.repeat)
    return 0


if __name__ == "__main__":
    sys.exit(main())
