"""Writes fixtures/conformance-clients/<revision>/<scenario>.json: for each client scenario of
the official runner (`@modelcontextprotocol/conformance` 0.2.0-alpha.12, pinned in
tests/e2e-node) that mcp-testbench serves, a script that serves what that scenario's server
serves, so that a conformance client started as the runner starts it meets the same server.

    python tools/conformance_client_scripts.py           # write the scripts
    python tools/conformance_client_scripts.py --check   # exit 1 if a shipped script differs

What each official server serves was read from the pinned package's dist/index.js (the
scenario classes `Ne` initialize, `un` tools_call, `pn`/`mn` elicitation defaults, `hn`
sse-retry; `ot` and `Lt` the shared stateful and stateless servers of tools_call). The
scripts copy its endpoint paths, sessions, tool names, descriptions and schemas, server
names, elicitation request and SSE retry fields, and its leniency where a conformant
server may be as lenient (a tools/list answered without the tools capability, an
elicitation sent whether the client declared it or not, marked as the violation it is).
Where the mock must stay a conformant server, or cannot do what the official one does, the
script says so in its description, and docs/conformance-clients.md lists each difference.
harness.official (_client_checks) says which script serves which scenario;
tests/project/test_tools.py runs the --check.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FOLDER = ROOT / "fixtures" / "conformance-clients"
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"

Json = dict[str, Any]

_WRITTEN_BY = "Written by tools/conformance_client_scripts.py; edit that, not this."


def text(value: str) -> Json:
    return {"type": "text", "text": value}


def script(name: str, revision: str, description: str, **members: Any) -> Json:
    return {
        "format_version": 1,
        "name": f"conformance-client-{name}",
        "description": f"{description} {_WRITTEN_BY}",
        "revisions": [revision],
        "transports": ["http"],
        **members,
    }


# -- initialize (2025-11-25) ------------------------------------------------------------------


def initialize() -> Json:
    return script(
        "initialize",
        HANDSHAKE,
        "The official `initialize` scenario's server: every path, no session, JSON answers, "
        "serverInfo test-server and no capabilities; tools/list answered with no tools "
        "though no tools capability was declared, as it does. It answers the version the "
        "client offers when it is 2025-06-18, 2025-11-25 or 2026-07-28; this mock answers "
        "2025-11-25 (the revision it is run at).",
        server={"info": {"name": "test-server", "version": "1.0.0"}, "capabilities": {}},
        http={"path": "/", "sessions": False, "get": "405"},
        steps=[
            {
                "label": "tools/list",
                "expect": {"method": "tools/list"},
                "reply": {"result": {"tools": []}},
                "repeat": True,
                "optional": True,
            }
        ],
    )


# -- tools_call (2025-11-25 and 2026-07-28) ---------------------------------------------------

ADD_NUMBERS: Json = {
    "name": "add_numbers",
    "description": "Add two numbers together",
    "inputSchema": {
        "type": "object",
        "properties": {
            "a": {"type": "number", "description": "First number"},
            "b": {"type": "number", "description": "Second number"},
        },
        "required": ["a", "b"],
    },
}


def tools_call(revision: str) -> Json:
    modern = revision == MODERN
    wire = (
        "the stateless server (JSON answers, no session)"
        if modern
        else "the stateful server without sessions (POST only, SSE answers)"
    )
    http: Json = {"path": "/mcp"}
    if not modern:
        # The official stateful server has no GET route (404): a conformant server says 405.
        http |= {"sessions": False, "reply_as": "sse", "get": "405"}
    return script(
        "tools-call",
        revision,
        f"The official `tools_call` scenario's server at {revision}: {wire}, "
        "serverInfo conformance-mock-server, one tool add_numbers. The official answer "
        "computes the sum; this mock answers the call with a fixed text (the runner judges "
        "the arguments only).",
        server={
            "info": {"name": "conformance-mock-server", "version": "1.0.0"},
            "capabilities": {"tools": {}},
        },
        http=http,
        steps=[
            {
                "label": "tools/list",
                "expect": {"method": "tools/list"},
                "reply": {"result": {"tools": [ADD_NUMBERS]}},
                "repeat": True,
                "optional": True,
            },
            {
                "label": "add_numbers",
                "expect": {"method": "tools/call", "params": {"name": "add_numbers"}},
                "reply": {
                    "result": {"content": [text("The sum of a and b (not computed by this mock)")]}
                },
                "repeat": True,
                "optional": True,
            },
        ],
    )


# -- elicitation-sep1034-client-defaults (2025-11-25) -----------------------------------------

ELICITATION_DEFAULTS: Json = {
    "message": "Test client default value handling - please accept with defaults",
    "requestedSchema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {
                "type": "boolean",
                "description": "Verification status",
                "default": True,
            },
        },
        "required": [],
    },
}
#: The id of the elicitation request: the one the suite's features.elicitation-answer reads.
ELICITATION_ID = "srv-elicit"
UNDECLARED = (
    "sent whether or not the client declared the elicitation capability, as the official "
    "scenario's server does (it does not enforce capabilities); a client that did not "
    "declare it must refuse it"
)


def elicitation_defaults() -> Json:
    request = {
        "id": ELICITATION_ID,
        "method": "elicitation/create",
        "params": ELICITATION_DEFAULTS,
        "violation": UNDECLARED,
    }
    return script(
        "elicitation-sep1034-client-defaults",
        HANDSHAKE,
        "The official `elicitation-sep1034-client-defaults` scenario's server: sessions, "
        "SSE answers, a GET stream; calling test_client_elicitation_defaults sends "
        "elicitation/create with a default for every field on the GET stream (as the "
        "official server does: its request names no related request), and answers the "
        "call once the client has answered it (in JSON here, on an event stream there).",
        server={
            "info": {"name": "elicitation-defaults-test-server", "version": "1.0.0"},
            "capabilities": {"tools": {}},
        },
        http={"path": "/mcp", "reply_as": "sse"},
        steps=[
            {
                "label": "tools/list",
                "expect": {"method": "tools/list"},
                "reply": {
                    "result": {
                        "tools": [
                            {
                                "name": "test_client_elicitation_defaults",
                                "description": "Tests that client applies defaults for "
                                "omitted elicitation fields",
                                "inputSchema": {
                                    "type": "object",
                                    "properties": {},
                                    "required": [],
                                },
                            }
                        ]
                    }
                },
                "repeat": True,
                "optional": True,
            },
            {
                "label": "test_client_elicitation_defaults",
                "expect": {
                    "method": "tools/call",
                    "params": {"name": "test_client_elicitation_defaults"},
                },
                "reply": {
                    "as": "json",
                    "before": [request],
                    "result": {"content": [text("Elicitation completed")]},
                },
                "optional": True,
            },
        ],
    )


# -- sse-retry (2025-11-25) -------------------------------------------------------------------


def sse_retry() -> Json:
    return script(
        "sse-retry",
        HANDSHAKE,
        "The official `sse-retry` scenario's server: every path, a session id, JSON answers, "
        "initialize answered with 2025-11-25 whatever the client offers; a tools/call "
        "answered with an event stream of one priming event (retry 500 ms) that the server "
        "then closes; the response waits for the client to reconnect. The official server "
        "closes 50 ms after the priming event and hands the response to any GET; this mock "
        "closes at once and resumes with Last-Event-ID (a GET without it opens a plain "
        "stream).",
        server={
            "info": {"name": "sse-retry-test-server", "version": "1.0.0"},
            "capabilities": {"tools": {}},
            "protocol_version": HANDSHAKE,
        },
        http={"path": "/"},
        steps=[
            {
                "label": "tools/list",
                "expect": {"method": "tools/list"},
                "reply": {
                    "result": {
                        "tools": [
                            {
                                "name": "test_reconnection",
                                "description": "A tool that triggers SSE stream closure to "
                                "test client reconnection behavior",
                                "inputSchema": {
                                    "type": "object",
                                    "properties": {},
                                    "required": [],
                                },
                            }
                        ]
                    }
                },
                "repeat": True,
                "optional": True,
            },
            {
                "label": "tools/call",
                "expect": {"method": "tools/call"},
                "reply": {
                    "as": "sse",
                    "sse": {
                        "retry": 500,
                        "events": [{"prime": True, "close": True}, {"response": True}],
                    },
                    "result": {"content": [text("Reconnection test completed successfully")]},
                },
                "repeat": True,
                "optional": True,
            },
        ],
    )


def scripts() -> dict[str, Json]:
    """Every script, by its path under fixtures/conformance-clients/."""
    return {
        f"{HANDSHAKE}/initialize.json": initialize(),
        f"{HANDSHAKE}/tools_call.json": tools_call(HANDSHAKE),
        f"{HANDSHAKE}/elicitation-sep1034-client-defaults.json": elicitation_defaults(),
        f"{HANDSHAKE}/sse-retry.json": sse_retry(),
        f"{MODERN}/tools_call.json": tools_call(MODERN),
    }


def render(value: Json) -> str:
    """The file's text, in the form every fixture has (mock_servers._jsonfiles)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a shipped script differs")
    args = parser.parse_args(argv)
    wanted = {FOLDER / name: render(value) for name, value in scripts().items()}
    stale = []
    for path, content in wanted.items():
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != content:
                stale.append(f"{path.relative_to(ROOT)} differs")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
    shipped = set(FOLDER.rglob("*.json")) if FOLDER.is_dir() else set()
    for extra in sorted(shipped - set(wanted)):
        if args.check:
            stale.append(f"{extra.relative_to(ROOT)} is written by nothing")
        else:
            extra.unlink()
    for line in stale:
        print(f"{line}: run python tools/conformance_client_scripts.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
