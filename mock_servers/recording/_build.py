"""A capture becomes a script: steps in the order things happened, secrets out.

- The handshake (`initialize`, or the 2026-07-28 `server/discover`) gives the revision and
  the `server` section; the mock's built-in answers replay it, as they do `ping` and
  `notifications/initialized`.
- Each other client request is an expect step: its method, and its params (without the
  `_meta` a client fills in for itself) as a pattern that never names the request id, so
  the mock re-stamps the reply with the id of the request it answers. Volatile values in
  them (cursors, progress tokens, timestamps, UUIDs) become patterns unless `exact`.
- The server's answer is the reply (result, error, or an `isError` result, as sent); what
  the server sent while a request was open goes in that reply's `before` (over HTTP, what
  came on its stream), anything else is a `send` step in its place; a client's answer to
  a server request is an expect step on the server's id.
- A server message its revision's schema rejects keeps its mark, `violation`, with the
  reason: it is replayed as it was, never mended.
- A request the session ended before answering is a `hang` fault, and the description
  says the recording is partial.
- The last step of each request (as its pattern reads) repeats, so that a client asking
  again gets the last answer; a first page's step (no cursor) takes no next page's request.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.protocol import HANDSHAKE_REVISIONS, REVISIONS, is_stateless, json_type, validate
from mock_servers.engine import complete_stateless_result
from mock_servers.recording._capture import UNPARSED, Capture, Seen
from mock_servers.recording._redact import Redactor

__all__ = [
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "REDACTED_PLACEHOLDER",
    "VOLATILE_MEMBERS",
    "VOLATILE_SHAPES",
    "RecordError",
    "Recording",
    "build_script",
    "script_name",
]

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"

# Answered by the mock's built-in answers (docs/scripts.md, Defaults), never scripted.
_BUILT_IN = frozenset({"initialize", "server/discover", "ping"})
_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# Members whose values a client makes up afresh each session (the drift check, _drift.py,
# ignores them too).
VOLATILE_MEMBERS = frozenset(
    {"cursor", "progressToken", "requestId", "timestamp", "createdAt", "updatedAt", "nonce"}
)
VOLATILE_SHAPES = (
    re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$"),
    re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"),
    re.compile(r"^[0-9a-f]{24,}$"),
)
REDACTED_PLACEHOLDER = re.compile(r"<redacted:[^>]*>")
LEGACY_SSE_REVISION = HANDSHAKE_REVISIONS[0]  # HTTP+SSE is the 2024-11-05 transport


class RecordError(Exception):
    """A recording that cannot be made: one line, what and what to do."""


@dataclass
class Recording:
    """The script (decoded JSON), whether it is partial and why, and notes for the user."""

    script: dict[str, Any]
    partial: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    violations: int = 0


def script_name(stem: str) -> str:
    """A script `name` (file-name-like, lower case) from a file's stem."""
    name = re.sub(r"[^a-z0-9._-]+", "-", stem.lower()).strip("-._")
    return name or "recording"


@dataclass
class _Open:
    """A client request not answered yet, and the step it is."""

    step: dict[str, Any]
    request: dict[str, Any]
    exchange: int | None
    events: list[dict[str, Any]] = field(default_factory=list)
    asks: bool = False  # the server sent a request of its own before answering
    retry: int | None = None


def _key(request_id: Any) -> str:
    return f"{type(request_id).__name__}:{request_id}"  # 1 and "1" stay apart


class _Builder:
    def __init__(self, capture: Capture, *, exact: bool, redactor: Redactor) -> None:
        self.capture = capture
        self.exact = exact
        self.redact = redactor
        self.steps: list[dict[str, Any]] = []
        self.open: dict[str, _Open] = {}
        self.built_in: set[str] = set()
        self.asked: set[str] = set()  # ids of the server's own requests
        self.partial: list[str] = []
        self.notes: list[str] = []
        self.violations = 0
        self.revision = ""

    # -- the handshake -------------------------------------------------------------------

    def handshake(self, seen: list[Seen]) -> dict[str, Any]:
        requests = {
            _key(m["id"]): m["method"]
            for s in seen
            if s.sender == "client"
            for m in _messages(s)
            if m.get("method") in ("initialize", "server/discover") and "id" in m
        }
        answers: dict[str, dict[str, Any]] = {}
        for s in seen:
            for m in _messages(s) if s.sender == "server" else []:
                method = requests.get(_key(m.get("id"))) if "method" not in m else None
                if method is not None and isinstance(m.get("result"), dict):
                    answers.setdefault(method, m["result"])
        server: dict[str, Any] = {}
        if "initialize" in answers:
            result = answers["initialize"]
            self.revision = str(result.get("protocolVersion"))
            info = result.get("serverInfo")
        elif "server/discover" in answers:
            result = answers["server/discover"]
            self.revision = "2026-07-28"
            supported = [v for v in result.get("supportedVersions", []) if v in REVISIONS]
            if supported:
                server["supported_versions"] = supported
            meta = result.get("_meta")
            info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
        else:
            self.revision = HANDSHAKE_REVISIONS[-1]
            self.partial.append(
                "the session ended before the server answered the handshake (the revision "
                f"{self.revision} is a guess; server info and capabilities are missing)"
            )
            return server
        if self.revision not in REVISIONS:
            raise RecordError(
                f"the server speaks protocol version {self.revision!r}, which this "
                f"mcp-testbench does not know (it knows {', '.join(REVISIONS)})"
            )
        if isinstance(info, dict):
            server["info"] = self.redact.json(info)
        if isinstance(result.get("capabilities"), dict):
            server["capabilities"] = self.redact.json(result["capabilities"])
        if isinstance(result.get("instructions"), str):
            server["instructions"] = self.redact.text(result["instructions"])
        return server

    # -- the exchange ------------------------------------------------------------------------

    def walk(self, seen: list[Seen]) -> None:
        for s in seen:
            if s.prime:
                owner = self._owner_of_stream(s)
                if owner is not None:
                    owner.events.append({"prime": True, "id": s.event_id or ""})
                    owner.retry = owner.retry if s.retry is None else s.retry
                continue
            if s.message is UNPARSED:
                self._unparsed(s)
                continue
            for message in _messages(s):
                if s.sender == "client":
                    self._from_client(message, s)
                else:
                    self._from_server(message, s)
        for waiting in self.open.values():
            method = waiting.request.get("method")
            waiting.step["reply"] = {"fault": {"kind": "hang"}}
            self.partial.append(f"the server never answered the client's {method}")

    def _unparsed(self, s: Seen) -> None:
        if s.sender == "client":
            self.notes.append("a line from the client was not JSON; it is not in the script")
        elif self.capture.transport == "stdio" and s.text.strip():
            self.steps.append({"fault": {"kind": "garbage", "text": self.redact.text(s.text)}})
            self.notes.append("the server wrote a line that is not JSON: a garbage fault")

    def _from_client(self, message: dict[str, Any], s: Seen) -> None:
        method = message.get("method")
        if isinstance(method, str) and "id" in message:
            if method in _BUILT_IN:
                self.built_in.add(_key(message["id"]))
                return
            step: dict[str, Any] = {"expect": self._request_pattern(message), "reply": {}}
            self.steps.append(step)
            self.open[_key(message["id"])] = _Open(step, message, s.exchange)
        elif method is None and _key(message.get("id")) in self.asked:
            answer = "error" if "error" in message else "result"
            value = message.get(answer)
            pattern = self._pattern(self.redact.json(value)) if self.exact else {"$present": True}
            self.steps.append({"expect": {"id": message["id"], answer: pattern}})

    def _from_server(self, message: dict[str, Any], s: Seen) -> None:
        key = _key(message.get("id"))
        if "method" not in message:
            if key in self.built_in:
                return
            waiting = self.open.pop(key, None)
            if waiting is None:
                self.notes.append(f"an answer to no open request (id {message.get('id')!r})")
                return
            self._answer(waiting, message, s)
            return
        out = self.redact.json({k: v for k, v in message.items() if k != "jsonrpc"})
        if "id" in message:
            self.asked.add(key)
        owner = self._owner(message, s)
        method = str(message["method"])
        mark = self._problem({"jsonrpc": "2.0", **out}, None)
        if mark is None and is_stateless(self.revision) and method == "notifications/message":
            mark = self._log_problem(out, owner)
        if owner is None:
            step: dict[str, Any] = {"send": out}
            if mark is not None:
                out["violation"] = mark
            self.steps.append(step)
            return
        if "id" in message:
            owner.asks = True
        item: dict[str, Any] = {"message": dict(out)}
        if s.event_id:
            item["id"] = s.event_id
        if mark is not None:
            item["violation"] = mark
        owner.events.append(item)
        owner.retry = owner.retry if s.retry is None else s.retry
        before = dict(out)
        if not self.exact:
            before = self._templated(before, owner.request)
        if mark is not None:
            before["violation"] = mark
        owner.step["reply"].setdefault("before", []).append(before)

    def _owner(self, message: dict[str, Any], s: Seen) -> _Open | None:
        """The open request a server message went with: over Streamable HTTP, the one whose
        stream carried it; over stdio and HTTP+SSE (one stream for all), the one its progress
        token names, or else the latest."""
        if self.capture.transport == "http":
            return self._owner_of_stream(s)
        token = (message.get("params") or {}).get("progressToken")
        if token is not None:
            for waiting in self.open.values():
                meta = (waiting.request.get("params") or {}).get("_meta") or {}
                if meta.get("progressToken") == token:
                    return waiting
        return next(reversed(self.open.values()), None)

    def _owner_of_stream(self, s: Seen) -> _Open | None:
        if s.channel != "post" or s.exchange is None:
            return None
        return next((w for w in self.open.values() if w.exchange == s.exchange), None)

    def _answer(self, waiting: _Open, message: dict[str, Any], s: Seen) -> None:
        reply = waiting.step["reply"]
        method = waiting.request.get("method")
        member = "error" if "error" in message else "result"
        value = self.redact.json(message.get(member))
        reply[member] = value
        mark = self._problem({"jsonrpc": "2.0", "id": message.get("id"), member: value}, method)
        if mark is not None:
            reply["violation"] = mark
        if self.capture.transport != "http":
            return
        if s.sse:
            reply["as"] = "sse"
            retry = waiting.retry if s.retry is None else s.retry
            ids = any("id" in e for e in waiting.events) or s.event_id
            if ids and not waiting.asks:
                # The stream as it was: primes and messages with their event ids. (A
                # stream with a server request keeps `before`: its answer is awaited.)
                response: dict[str, Any] = {"response": True}
                if s.event_id:
                    response["id"] = s.event_id
                reply.pop("before", None)
                reply["sse"] = {"events": [*waiting.events, response]}
            if retry is not None:
                reply.setdefault("sse", {})["retry"] = retry
        elif s.status is not None and s.status != 200:
            reply["status"] = s.status

    # -- patterns, templates, marks -----------------------------------------------------------

    def _request_pattern(self, message: dict[str, Any]) -> dict[str, Any]:
        method = message["method"]
        pattern: dict[str, Any] = {"method": method}
        params = message.get("params")
        kept: dict[str, Any] = {}
        if isinstance(params, dict):
            kept = {k: v for k, v in params.items() if k != "_meta"}
            meta = params.get("_meta")
            if isinstance(meta, dict) and META_LOG_LEVEL in meta:
                kept["_meta"] = {META_LOG_LEVEL: meta[META_LOG_LEVEL]}
        if kept:
            pattern["params"] = self._pattern(self.redact.json(kept))
        if method.endswith("/list") and "cursor" not in kept:
            # A first page is asked without a cursor: its step must not take the next
            # page's request (the pattern is partial, and a repeated step stays active).
            if kept:
                pattern["params"]["cursor"] = {"$absent": True}
            else:
                pattern["params"] = {"$any": [{"$absent": True}, {"cursor": {"$absent": True}}]}
        return pattern

    def finish(self) -> None:
        """The last step of each request as it was asked repeats: a client that asks it
        again, more often than it did while recorded, gets that answer again. Not a step
        whose answer waits for a server request of its own (its id would be used twice),
        nor one left unanswered."""
        last: dict[str, dict[str, Any]] = {}
        for step in self.steps:
            if "method" in step.get("expect", {}):
                last[json.dumps(step["expect"], sort_keys=True)] = step
        for step in last.values():
            reply = step.get("reply", {})
            asks = any("id" in m for m in reply.get("before", []))
            if not asks and "fault" not in reply:
                step["repeat"] = True

    def _pattern(self, value: Any, member: str | None = None) -> Any:
        if isinstance(value, dict):
            if any(k.startswith("$") for k in value):
                return {"$type": "object"}  # it would read as a pattern operator
            return {k: self._pattern(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self._pattern(v) for v in value]
        if isinstance(value, str) and REDACTED_PLACEHOLDER.search(value):
            parts = REDACTED_PLACEHOLDER.split(value)
            return {"$regex": "^" + ".+".join(re.escape(p) for p in parts) + "$"}
        if self.exact:
            return value
        if member in VOLATILE_MEMBERS and value is not None:
            return {"$type": json_type(value)}
        if isinstance(value, str):
            for shape in VOLATILE_SHAPES:
                if shape.match(value):
                    return {"$regex": shape.pattern}
        return value

    @staticmethod
    def _templated(message: dict[str, Any], request: Mapping[str, Any]) -> dict[str, Any]:
        """A progress notification echoes the token of the request it reports on."""
        params = message.get("params")
        meta = (request.get("params") or {}).get("_meta") or {}
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if isinstance(params, dict) and token is not None and params.get("progressToken") == token:
            pointer = "/params/_meta/progressToken"
            return {**message, "params": {**params, "progressToken": {"$request": pointer}}}
        return message

    def _problem(self, message: dict[str, Any], request_method: Any) -> str | None:
        checked = message
        result = message.get("result")
        if is_stateless(self.revision) and isinstance(result, dict):
            method = request_method if isinstance(request_method, str) else None
            checked = {**message, "result": complete_stateless_result(method, result)}
        method = request_method if isinstance(request_method, str) else None
        found = validate(checked, self.revision, "server", request_method=method)
        if not found:
            return None
        self.violations += 1
        first = found[0]
        return f"recorded as the server sent it: {first.pointer or '/'}: {first.reason}"

    def _log_problem(self, message: dict[str, Any], owner: _Open | None) -> str | None:
        """2026-07-28: a log message goes only with a request that opted in, at its level."""
        level = (message.get("params") or {}).get("level")
        wanted = None
        if owner is not None:
            meta = (owner.request.get("params") or {}).get("_meta") or {}
            wanted = meta.get(META_LOG_LEVEL) if isinstance(meta, dict) else None
        opted_in = wanted in _LOG_LEVELS and level in _LOG_LEVELS
        if opted_in and _LOG_LEVELS.index(level) >= _LOG_LEVELS.index(wanted):
            return None
        self.violations += 1
        return (
            "recorded as the server sent it: a log message for a request that did not opt in "
            f"to it (_meta {META_LOG_LEVEL})"
        )


def _messages(s: Seen) -> list[dict[str, Any]]:
    """The JSON-RPC objects of one entry (a batch's members)."""
    if isinstance(s.message, dict):
        return [s.message]
    if isinstance(s.message, list):
        return [m for m in s.message if isinstance(m, dict)]
    return []


def build_script(
    capture: Capture,
    *,
    name: str = "recording",
    exact: bool = False,
    redactor: Redactor | None = None,
    now: datetime.datetime | None = None,
) -> Recording:
    """The script of what `capture` saw (RecordError when it cannot be one)."""
    redact = redactor or Redactor()
    builder = _Builder(capture, exact=exact, redactor=redact)
    seen = capture.snapshot()
    server = builder.handshake(seen)
    builder.walk(seen)
    builder.finish()
    if capture.ended_by:
        builder.partial.insert(0, capture.ended_by)
    when = (now or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    info = server.get("info") or {}
    who = f" from {info['name']}" if isinstance(info.get("name"), str) and info["name"] else ""
    over = {"stdio": "stdio", "http": "Streamable HTTP", "sse-legacy": "HTTP+SSE"}
    description = f"Recorded{who} over {over[capture.transport]} by mcp-testbench record on {when}."
    if capture.transport == "sse-legacy" and builder.revision != LEGACY_SSE_REVISION:
        # The mock speaks HTTP+SSE at its own revision only, as the spec pairs them.
        elsewhere = (
            f"the server spoke {builder.revision} over HTTP+SSE, which serve replays at "
            f"{LEGACY_SSE_REVISION} only: replay this script over Streamable HTTP or stdio"
        )
        builder.notes.append(elsewhere)
        description += f" Note: {elsewhere}."
    if builder.violations:
        description += (
            f" {builder.violations} message(s) the {builder.revision} schema rejects are "
            "marked as violations."
        )
    if redact.found:
        names = ", ".join(f"{n} x{c}" for n, c in sorted(redact.found.items()))
        description += f" Secrets redacted: {names}."
    if builder.partial:
        description += " PARTIAL: " + "; ".join(builder.partial) + "."
    script: dict[str, Any] = {
        "format_version": 1,
        "name": name,
        "description": description,
        "revisions": [builder.revision],
        "server": server,
        "steps": builder.steps,
    }
    if capture.transport == "http":
        script["transports"] = ["http"]
        http: dict[str, Any] = {}
        facts = capture.http
        if facts.path != "/mcp":
            http["path"] = facts.path
        if not is_stateless(builder.revision):
            if not facts.sessions:
                http["sessions"] = False
            if facts.get == "405":
                http["get"] = "405"
            if facts.delete == "405":
                http["delete"] = "405"
        if http:
            script["http"] = http
    elif capture.transport == "sse-legacy" and builder.revision == LEGACY_SSE_REVISION:
        script["transports"] = ["sse-legacy"]
        if capture.http.path != "/mcp":
            script["http"] = {"path": capture.http.path}
    return Recording(script, builder.partial, builder.notes, builder.violations)
