"""`mcp-testbench serve` for development: which revision a client speaks, and what it sees.

A mock run serves one revision. For a developer's client the mock picks it from the
client's first message, among the revisions the script allows on the transport:

- `initialize` (2024-11-05 .. 2025-11-25): the version the client asked for if the script
  allows it, otherwise the newest handshake revision it allows (the lifecycle's
  negotiation: the server answers with another version it supports);
- `server/discover`, or any request whose `_meta` names a protocol version: 2026-07-28
  if allowed; otherwise the newest handshake revision, whose answer to the probe
  (-32601) makes a dual-era client fall back to `initialize`.

`SessionTranscript` is the transcript of one such mock: it keeps its own entries, copies
each into the run's shared transcript tagged with the session, and prints one readable
line per message on stderr.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.protocol import (
    HANDSHAKE_REVISIONS,
    STATELESS_REVISIONS,
    ProtocolError,
    decode_json,
)
from mock_servers.engine._engine import META_PROTOCOL_VERSION
from mock_servers.engine._script import Script, ScriptError
from mock_servers.engine._transcript import Transcript

__all__ = [
    "Choice",
    "SessionTranscript",
    "choose_revision",
    "first_message",
    "message_line",
    "served_revisions",
]


def served_revisions(script: Script, transport: str) -> tuple[str, ...]:
    """The script's revisions that exist on `transport` (HTTP+SSE is 2024-11-05 only)."""
    if transport == "sse-legacy":
        allowed = tuple(r for r in script.revisions if r == "2024-11-05")
    elif transport == "http":
        allowed = tuple(r for r in script.revisions if r != "2024-11-05")
    else:
        allowed = script.revisions
    if not allowed:
        if transport == "http":
            fix = "serve it with --http HOST:PORT --sse-legacy (2024-11-05 is HTTP+SSE)"
        elif transport == "sse-legacy":
            fix = "drop --sse-legacy: HTTP+SSE is the 2024-11-05 transport only"
        else:
            fix = "serve it over another transport, or add a revision to the script"
        raise ScriptError(
            script.source,
            "/revisions",
            f"none of the script's revisions ({', '.join(script.revisions)}) runs over {transport}",
            fix,
        )
    return allowed


@dataclass(frozen=True)
class Choice:
    revision: str
    why: str  # for the one line that says what was negotiated
    probe: bool = False  # a dual-era probe answered at a handshake revision


def first_message(data: bytes | str) -> dict[str, Any] | None:
    """The first JSON-RPC object in a body or line (a batch's first), or None."""
    try:
        value = decode_json(data)
    except ProtocolError:  # not JSON, not UTF-8, or nested too deep: no revision in it
        return None
    if isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, dict) else None


def _meta_version(message: Mapping[str, Any]) -> str | None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def choose_revision(
    allowed: Sequence[str], message: Mapping[str, Any] | None, *, version_header: str | None = None
) -> Choice:
    """The revision to serve a client whose first message is `message` (see the module);
    `version_header` is the MCP-Protocol-Version header it came with, over HTTP."""
    handshake = [r for r in allowed if r in HANDSHAKE_REVISIONS]
    stateless = [r for r in allowed if r in STATELESS_REVISIONS]
    newest = allowed[-1]
    message = message or {}
    method = message.get("method")
    if method == "initialize" and handshake:
        params = message.get("params")
        asked = params.get("protocolVersion") if isinstance(params, dict) else None
        if asked in handshake:
            return Choice(str(asked), f"the client asked for {asked}")
        return Choice(
            handshake[-1],
            f"the client asked for {json.dumps(asked)}, "
            f"the script allows {', '.join(handshake)}: answered with the newest",
        )
    if method == "server/discover" or _meta_version(message) is not None:
        if stateless:
            return Choice(stateless[-1], f"the client speaks {stateless[-1]} ({method})")
        if handshake:
            return Choice(
                handshake[-1],
                f"a {method} probe; the script allows no 2026-era revision, so it gets "
                "-32601 and the client may fall back to initialize",
                probe=True,
            )
    if version_header in allowed:
        return Choice(
            str(version_header), f"its MCP-Protocol-Version header names {version_header}"
        )
    if handshake:
        # Every 2026-07-28 request names its revision in _meta; one that does not, with no
        # session, is a handshake-era client's (one that lost or never echoed its session
        # id): it gets that era's answers (400 or 404), not a 2026 header error.
        return Choice(
            handshake[-1],
            f"the first message ({method or 'not a request'}) names no 2026-era revision: "
            "answered as the handshake era",
        )
    return Choice(newest, f"the first message ({method or 'not a request'}) names no revision")


def _describe(message: Any) -> str:
    if not isinstance(message, dict):
        return "a batch" if isinstance(message, list) else "a message"
    method = message.get("method")
    has_id = "id" in message
    ident = f" id={json.dumps(message.get('id'))}" if has_id else ""
    if isinstance(method, str):
        return f"{method}{ident}"
    error = message.get("error")
    if isinstance(error, dict):
        text = str(error.get("message", ""))[:80]
        return f"error {error.get('code')}{ident}: {text}"
    return f"result{ident}"


def message_line(entry: Mapping[str, Any]) -> str | None:
    """One readable line for a transcript entry worth showing while serving, else None."""
    kind = entry.get("kind")
    if kind == "message":
        arrow = "->" if entry.get("direction") == "client" else "<-"
        value = entry.get("message")
        if isinstance(value, list):
            return f"{arrow} batch of {len(value)}: " + ", ".join(_describe(m) for m in value)
        refused = entry.get("refused")
        suffix = f" (refused {refused.get('status')})" if isinstance(refused, dict) else ""
        return f"{arrow} {_describe(value)}{suffix}"
    if kind == "refusal":
        return f"!! HTTP {entry.get('status')} {entry.get('rule')}: {entry.get('reason')}"
    if kind == "unmatched":
        diff = entry.get("diff") or []
        closest = entry.get("closest")
        where = f" (closest: {closest}: {'; '.join(map(str, diff))})" if closest else ""
        return f"?? no scripted step matches{where}"
    if kind == "invalid":
        return f"!! not JSON-RPC: {entry.get('reason')}"
    if kind == "fault":
        fault = entry.get("fault")
        return f"** fault {fault.get('kind') if isinstance(fault, dict) else fault}"
    if kind == "unconsumed":
        return ".. steps never reached: " + ", ".join(map(str, entry.get("steps") or []))
    return None


class SessionTranscript(Transcript):
    """One session's transcript: its own entries, copied into `shared` and logged.

    The copies carry `session` (the tag). `log` gets the readable lines (None: quiet).
    With no `shared`, `path` is where its own entries are written (a stdio process).
    """

    def __init__(
        self,
        shared: Transcript | None,
        tag: str,
        *,
        script: str,
        revision: str,
        transport: str,
        log: Callable[[str], None] | None,
        path: str | Path | None = None,
    ) -> None:
        super().__init__(script=script, revision=revision, transport=transport, path=path)
        self.shared = shared
        self.tag = tag
        self.log = log

    def record(self, kind: str, **fields: Any) -> None:
        super().record(kind, **fields)
        if self.shared is not None:
            self.shared.record(kind, session=self.tag, **fields)
        if self.log is not None:
            line = message_line({"kind": kind, **fields})
            if line is not None:
                self.log(f"[{self.tag}] {line}")
