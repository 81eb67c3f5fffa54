"""The drift check (`mcp-testbench record --check`): a recording replayed against the live
server, and every answer compared with the recorded one.

- The handshake as the recording's revision has it (`initialize` and
  `notifications/initialized`, or 2026-07-28's `server/discover` with each request's
  `_meta`), then each recorded client request in order, its params made concrete from the
  step's pattern: a cursor the recording made a pattern is the one the live server gave in
  this run, a fresh timestamp or UUID where the recording kept only its form.
- A request the server sends meanwhile gets the client's recorded answer when the script
  holds it literally (`record --exact`), else an error answer that says so.
- Answers are compared as typed JSON (1, 1.0 and true differ), the recording's volatile
  values honoured: a timestamp, UUID or long hex string matches any of its form, a
  redacted secret any text in its place, a cursor, `requestState` or `nextCursor` any
  value of its type. What differs is classified: a list's items added, removed or renamed
  (a removed and an added one), a tool's schema changed (with the JSON pointer), a result
  changed, an error new or gone or changed, `isError` flipped, the handshake's
  capabilities, server info or protocol version changed.
"""

from __future__ import annotations

import datetime
import json
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.protocol import INTERNAL_ERROR, REVISIONS, is_stateless, json_type, same_json
from mock_servers.engine import Script, ScriptError, load_script, package_version
from mock_servers.recording._build import (
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    REDACTED_PLACEHOLDER,
    VOLATILE_MEMBERS,
    VOLATILE_SHAPES,
    RecordError,
)
from mock_servers.recording._replay import Answer, Live, LiveHttp, LiveStdio, declared_headers

__all__ = ["DEFAULT_TIMEOUT", "Difference", "DriftReport", "check_drift"]

DEFAULT_TIMEOUT = 30.0
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
_CLIENT_NAME = "mcp-testbench-record-check"
# Values a server makes up afresh each time: any value of their JSON type will do.
_OPAQUE_MEMBERS = VOLATILE_MEMBERS | {"nextCursor", "requestState"}
# The list results whose items are named: method -> (member, the item's key, the word).
_LISTS = {
    "tools/list": ("tools", "name", "tool"),
    "prompts/list": ("prompts", "name", "prompt"),
    "resources/list": ("resources", "uri", "resource"),
    "resources/templates/list": ("resourceTemplates", "uriTemplate", "resource template"),
}
_SCHEMAS = ("inputSchema", "outputSchema")
_MAX_LINES_PER_ANSWER = 20
_PROGRESS_EVERY = 25  # steps between two progress lines
_MISSING: Any = object()


@dataclass(frozen=True)
class Difference:
    """One thing that changed, at one step."""

    step: str
    """`handshake initialize`, or `step N METHOD` (N the script's step index)."""
    kind: str
    path: str
    """A JSON pointer into the answer (empty: the answer as a whole)."""
    text: str

    def line(self) -> str:
        return f"{self.step}: {self.text}"


@dataclass
class DriftReport:
    script: str
    target: str
    revision: str
    recorded: int = 0
    """Client requests in the recording (the handshake not counted)."""
    requests: int = 0
    """Of those, the ones replayed."""
    differences: list[Difference] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def drifted(self) -> bool:
        return bool(self.differences)

    def summary(self) -> str:
        if not self.differences:
            return (
                f"no drift: the handshake and {_count(self.requests, 'recorded request')} answered "
                f"as recorded ({self.target})"
            )
        where = sorted({d.step for d in self.differences}, key=_step_order)
        return (
            f"DRIFT: {_count(len(self.differences), 'difference')} in {len(where)} of "
            f"{self.recorded + 1} exchanges ({', '.join(where)}) against {self.target}"
        )

    def lines(self) -> list[str]:
        return [d.line() for d in self.differences] + [self.summary()]

    def as_json(self) -> dict[str, Any]:
        return {
            "script": self.script,
            "target": self.target,
            "revision": self.revision,
            "recorded": self.recorded,
            "requests": self.requests,
            "drifted": self.drifted,
            "differences": [
                {"step": d.step, "kind": d.kind, "path": d.path, "text": d.text}
                for d in self.differences
            ],
            "notes": self.notes,
            "summary": self.summary(),
        }


def _count(number: int, noun: str) -> str:
    """ "1 request", "2 requests": a report reads as a person says it."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _step_order(step: str) -> tuple[int, str]:
    found = re.match(r"step (\d+)", step)
    return (int(found.group(1)) + 1 if found else 0, step)


# -- comparing ------------------------------------------------------------------------------


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _volatile_holds(recorded: str, live: Any) -> bool | None:
    """Whether `live` stands for the volatile `recorded` string (None: not volatile)."""
    if REDACTED_PLACEHOLDER.search(recorded):
        parts = REDACTED_PLACEHOLDER.split(recorded)
        form = "^" + ".+".join(re.escape(p) for p in parts) + "$"
        return isinstance(live, str) and re.match(form, live, re.DOTALL) is not None
    for shape in VOLATILE_SHAPES:
        if shape.match(recorded):
            return isinstance(live, str) and shape.match(live) is not None
    return None


def _changes(recorded: Any, live: Any, pointer: str = "", member: str = "") -> Iterator[str]:
    """Each difference between a recorded value and the live one, as `POINTER: what`."""
    where = pointer or "/"
    if recorded is _MISSING:
        yield f"{where}: added ({_show(live)})"
        return
    if live is _MISSING:
        yield f"{where}: removed (was {_show(recorded)})"
        return
    if member in _OPAQUE_MEMBERS and not isinstance(recorded, (dict, list, type(None))):
        # A value, not a schema's property of that name (`properties/cursor` is compared).
        if json_type(recorded) != json_type(live):
            yield f"{where}: {_show(recorded)} -> {_show(live)}"
        return
    if isinstance(recorded, str):
        holds = _volatile_holds(recorded, live)
        if holds is not None:
            if not holds:
                yield f"{where}: {_show(recorded)} -> {_show(live)}"
            return
    if isinstance(recorded, dict) and isinstance(live, dict):
        for key in [*recorded, *(k for k in live if k not in recorded)]:
            yield from _changes(
                recorded.get(key, _MISSING),
                live.get(key, _MISSING),
                f"{pointer}/{_escape(key)}",
                key,
            )
        return
    if isinstance(recorded, list) and isinstance(live, list):
        for index in range(max(len(recorded), len(live))):
            yield from _changes(
                recorded[index] if index < len(recorded) else _MISSING,
                live[index] if index < len(live) else _MISSING,
                f"{pointer}/{index}",
            )
        return
    if not same_json(recorded, live):
        yield f"{where}: {_show(recorded)} -> {_show(live)}"


def _pointer_of(change: str) -> str:
    return change.split(": ", 1)[0]


class _Comparer:
    def __init__(self, report: DriftReport) -> None:
        self.report = report

    def add(self, step: str, kind: str, path: str, text: str) -> None:
        self.report.differences.append(Difference(step, kind, path, text))

    def changes(self, step: str, kind: str, prefix: str, recorded: Any, live: Any) -> None:
        found = list(_changes(recorded, live))
        for change in found[:_MAX_LINES_PER_ANSWER]:
            self.add(step, kind, _pointer_of(change), f"{prefix}: {change}")
        if len(found) > _MAX_LINES_PER_ANSWER:
            rest = len(found) - _MAX_LINES_PER_ANSWER
            self.add(
                step,
                kind,
                "",
                f"{prefix}: and {rest} more {'difference' if rest == 1 else 'differences'}",
            )

    def answer(self, step: str, method: str, reply: dict[str, Any], live: dict[str, Any]) -> None:
        recorded_error, live_error = reply.get("error"), live.get("error")
        if recorded_error is not None and live_error is not None:
            self._errors(step, recorded_error, live_error)
        elif live_error is not None:
            self.add(step, "new-error", "/error", f"new error: {_error_text(live_error)}")
        elif recorded_error is not None:
            self.add(
                step,
                "error-gone",
                "/error",
                f"error gone: was {_error_text(recorded_error)}; now a result",
            )
        else:
            self._results(step, method, reply.get("result"), live.get("result", _MISSING))

    def _errors(self, step: str, recorded: Any, live: Any) -> None:
        if not isinstance(recorded, dict) or not isinstance(live, dict):
            self.changes(step, "error-changed", "error changed", recorded, live)
            return
        if not same_json(recorded.get("code"), live.get("code")):
            self.add(
                step,
                "error-changed",
                "/error/code",
                f"error changed: {_error_text(recorded)} -> {_error_text(live)}",
            )
            return
        self.changes(step, "error-changed", "error changed", recorded, live)

    def _results(self, step: str, method: str, recorded: Any, live: Any) -> None:
        if not isinstance(recorded, dict) or not isinstance(live, dict):
            self.changes(step, "result-changed", "result changed", recorded, live)
            return
        recorded, live = dict(recorded), dict(live)
        if method == "tools/call":
            was, now = recorded.pop("isError", False), live.pop("isError", False)
            if was is not now:
                self.add(
                    step,
                    "is-error-flipped",
                    "/isError",
                    f"isError flipped: {_show(was)} -> {_show(now)}",
                )
        if method in _LISTS:
            member, key, word = _LISTS[method]
            self._items(step, word, key, recorded.pop(member, []), live.pop(member, _MISSING))
        self.changes(step, "result-changed", "result changed", recorded, live)

    def _items(self, step: str, word: str, key: str, recorded: Any, live: Any) -> None:
        if not isinstance(recorded, list) or not isinstance(live, list):
            self.changes(step, "result-changed", "result changed", recorded, live)
            return
        before = {_item_name(item, key): item for item in recorded}
        after = {_item_name(item, key): item for item in live}
        removed = [name for name in before if name not in after]
        added = [name for name in after if name not in before]
        said = []
        if removed:
            said.append(f"{_names(word, removed)} removed")
        if added:
            said.append(f"{_names(word, added)} added")
        if said:
            kind = "renamed" if removed and added else "removed" if removed else "added"
            text = "; ".join(said) + (" (renamed?)" if removed and added else "")
            self.add(step, f"{word.replace(' ', '-')}-{kind}", "", text)
        for name, item in before.items():
            if name not in after:
                continue
            live_item = after[name]
            label = f"{word} {json.dumps(name)}"
            if isinstance(item, dict) and isinstance(live_item, dict):
                for schema in _SCHEMAS:
                    if schema in item or schema in live_item:
                        self.changes(
                            step,
                            "schema-changed",
                            f"{label} {schema} changed",
                            item.get(schema, _MISSING),
                            live_item.get(schema, _MISSING),
                        )
                item = {k: v for k, v in item.items() if k not in _SCHEMAS}
                live_item = {k: v for k, v in live_item.items() if k not in _SCHEMAS}
            self.changes(step, "result-changed", f"{label} changed", item, live_item)
        order_before = [n for n in before if n in after]
        order_after = [n for n in after if n in before]
        if order_before != order_after:
            self.add(
                step, "result-changed", "", f"{word}s in another order: {', '.join(order_after)}"
            )


def _item_name(item: Any, key: str) -> str:
    if isinstance(item, dict) and isinstance(item.get(key), str):
        return str(item[key])
    return json.dumps(item, sort_keys=True)


def _names(word: str, names: Sequence[str]) -> str:
    quoted = ", ".join(json.dumps(n) for n in names)
    return f"{word} {quoted}" if len(names) == 1 else f"{word}s {quoted}"


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return f"{error.get('code')} {json.dumps(error.get('message', ''), ensure_ascii=False)}"
    return _show(error)


# -- replaying --------------------------------------------------------------------------------


@dataclass
class _Concrete:
    """A recorded request's params made concrete, and what could not be."""

    lacking: list[str] = field(default_factory=list)
    missing_cursor: bool = False


def _fresh(regex: str) -> str | None:
    """A fresh value of a volatile form the recording kept as a `$regex`."""
    now = datetime.datetime.now(datetime.timezone.utc)
    forms = (now.strftime("%Y-%m-%dT%H:%M:%SZ"), str(uuid.uuid4()), uuid.uuid4().hex)
    for shape, value in zip(VOLATILE_SHAPES, forms, strict=True):
        if shape.pattern == regex:
            return value
    return None


class _Replay:
    def __init__(
        self,
        script: Script,
        live: Live,
        report: DriftReport,
        timeout: float,
        say: Callable[[str], None],
    ) -> None:
        self.script = script
        self.live = live
        self.report = report
        self.compare = _Comparer(report)
        self.timeout = timeout
        self.say = say
        self.revision = script.revisions[0]
        self.stateless = is_stateless(self.revision)
        self.results: dict[str, dict[str, Any]] = {}  # the last live result of each method
        self.answers = self._recorded_answers()
        # Every request the server sent while recorded, in order: an answer for one the live
        # server sends at another step than it did.
        self.asked = [m for step in script.steps for m in _server_requests(step.raw)]

    # The client's side of the exchange ------------------------------------------------

    def _recorded_answers(self) -> dict[str, dict[str, Any]]:
        """The client's answers to the server's requests, by the server's request id."""
        found: dict[str, dict[str, Any]] = {}
        for step in self.script.steps:
            expect = step.raw.get("expect")
            if isinstance(expect, dict) and "method" not in expect and "id" in expect:
                found.setdefault(json.dumps(expect["id"]), dict(expect))
        return found

    def _capabilities(self) -> dict[str, Any]:
        """What the recorded client must have declared: what the server asked of it."""
        methods = {m.get("method") for m in self.asked}
        for step in self.script.steps:  # 2026-07-28: requests as a result's inputRequests
            result = (step.raw.get("reply") or {}).get("result")
            wanted = result.get("inputRequests") if isinstance(result, dict) else None
            if isinstance(wanted, dict):
                methods |= {r.get("method") for r in wanted.values() if isinstance(r, dict)}
        capabilities: dict[str, Any] = {}
        if "roots/list" in methods:
            capabilities["roots"] = {}
        if "sampling/createMessage" in methods:
            capabilities["sampling"] = {}
        if "elicitation/create" in methods:
            capabilities["elicitation"] = {}
        return capabilities

    def _server_asks(
        self, step: str, asked: list[dict[str, Any]]
    ) -> Callable[[dict[str, Any]], dict[str, Any]]:
        """Answers the live server's requests during one step: with the recorded answer to
        the recorded request of that method in that step, when the script holds it."""
        unused = list(asked)

        def answer(message: dict[str, Any]) -> dict[str, Any]:
            method = message.get("method")
            recorded = next((m for m in unused if m.get("method") == method), None)
            if recorded is not None:
                unused.remove(recorded)
            else:
                recorded = next((m for m in self.asked if m.get("method") == method), None)
            found = None
            if recorded is not None:
                if recorded in self.asked:
                    self.asked.remove(recorded)
                found = self.answers.get(json.dumps(recorded.get("id")))
            for member in ("result", "error"):
                value = (found or {}).get(member, _MISSING)
                if value is not _MISSING and not _has_operator(value):
                    return {"jsonrpc": "2.0", "id": message.get("id"), member: value}
            why = (
                "the recording has the client's answer only as a pattern (record with --exact "
                "to keep it)"
                if found is not None
                else "the recorded session has no such request at this step"
            )
            self.report.notes.append(f"{step}: the server asked {method}; {why}")
            return {
                "jsonrpc": "2.0",
                "id": message.get("id"),
                "error": {
                    "code": INTERNAL_ERROR,
                    "message": f"no recorded answer to {method} (mcp-testbench record --check): "
                    f"{why}",
                },
            }

        return answer

    def _params(self, method: str, pattern: Any, concrete: _Concrete) -> dict[str, Any] | None:
        value = self._concrete(pattern, method, "", concrete)
        if value is _MISSING:
            return None
        return value if isinstance(value, dict) else None

    def _concrete(self, pattern: Any, method: str, member: str, concrete: _Concrete) -> Any:
        if member == "requestState":  # 2026-07-28: the server's own state, literal or not
            state = self.results.get(method, {}).get("requestState")
            if isinstance(state, str):
                return state
        if isinstance(pattern, dict) and pattern and all(k.startswith("$") for k in pattern):
            if pattern.get("$absent") is True:
                return _MISSING
            if "$any" in pattern:
                for option in pattern["$any"]:
                    attempt = _Concrete()
                    value = self._concrete(option, method, member, attempt)
                    if not attempt.lacking and not attempt.missing_cursor:
                        return value
                return self._concrete(pattern["$any"][0], method, member, concrete)
            if member == "cursor":
                cursor = self.results.get(method, {}).get("nextCursor")
                if isinstance(cursor, str):
                    return cursor
                concrete.missing_cursor = True
                return _MISSING
            if isinstance(pattern.get("$regex"), str):
                fresh = _fresh(pattern["$regex"])
                if fresh is not None:
                    return fresh
                concrete.lacking.append(member or "params")
                return "<redacted>"
            kind = pattern.get("$type")
            if kind is not None:
                made = {
                    "string": str(uuid.uuid4()),
                    "integer": int(time.time()),
                    "number": time.time(),
                    "boolean": False,
                    "object": {},
                    "array": [],
                    "null": None,
                }.get(kind)
                if member not in VOLATILE_MEMBERS:
                    concrete.lacking.append(member or "params")
                return made
            concrete.lacking.append(member or "params")
            return None
        if isinstance(pattern, dict):
            out: dict[str, Any] = {}
            for key, sub in pattern.items():
                value = self._concrete(sub, method, key, concrete)
                if value is not _MISSING:
                    out[key] = value
            return out
        if isinstance(pattern, list):
            items = [self._concrete(sub, method, member, concrete) for sub in pattern]
            return [item for item in items if item is not _MISSING]
        return pattern

    def _meta(self, params: dict[str, Any] | None) -> dict[str, Any] | None:
        if not self.stateless:
            return params
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        meta[META_PROTOCOL_VERSION] = self.revision
        meta[META_CAPABILITIES] = self._capabilities()
        meta[META_CLIENT_INFO] = {"name": _CLIENT_NAME, "version": package_version()}
        params["_meta"] = meta
        return params

    # The exchange -----------------------------------------------------------------------

    def handshake(self) -> None:
        """Make the recording's handshake and compare its answer (RecordError: none came)."""
        method = "server/discover" if self.stateless else "initialize"
        step = f"handshake {method}"
        params = None
        if not self.stateless:
            params = {
                "protocolVersion": self.revision,
                "capabilities": self._capabilities(),
                "clientInfo": {"name": _CLIENT_NAME, "version": package_version()},
            }
        if self.stateless:  # its headers name the revision from the first request on
            self.live.use_revision(self.revision)
        answer = self.live.request(method, self._meta(params), self._refuse, self.timeout)
        message = answer.message
        if message is None:
            raise RecordError(
                f"the server did not answer {method} ({answer.failure}); check that the "
                "command or URL is the recorded server's"
            )
        result = message.get("result")
        if not isinstance(result, dict):
            raise RecordError(
                f"the server refused {method}: {_error_text(message.get('error'))}; the check "
                "needs the handshake the recording made"
            )
        server = self.script.server
        if self.stateless:
            live_versions = result.get("supportedVersions")
            if not isinstance(live_versions, list) or self.revision not in live_versions:
                self.compare.add(
                    step,
                    "protocol-version-changed",
                    "/supportedVersions",
                    f"protocol version {self.revision} no longer offered "
                    f"(supportedVersions {_show(live_versions)})",
                )
            elif "supported_versions" in server:
                known = [v for v in live_versions if v in REVISIONS]
                self.compare.changes(
                    step,
                    "protocol-version-changed",
                    "supportedVersions changed",
                    list(server["supported_versions"]),
                    known,
                )
            meta = result.get("_meta")
            info = meta.get(META_SERVER_INFO, _MISSING) if isinstance(meta, dict) else _MISSING
        else:
            live_version = result.get("protocolVersion")
            if live_version != self.revision:
                self.compare.add(
                    step,
                    "protocol-version-changed",
                    "/protocolVersion",
                    f"protocolVersion changed: {_show(self.revision)} -> {_show(live_version)}",
                )
            spoken = live_version if live_version in REVISIONS else self.revision
            self.live.use_revision(str(spoken))
            info = result.get("serverInfo", _MISSING)
            self.live.notify("notifications/initialized", None)
        if "info" in server:
            self.compare.changes(
                step, "server-info-changed", "serverInfo changed", _plain(server["info"]), info
            )
        if "capabilities" in server:
            self.compare.changes(
                step,
                "capabilities-changed",
                "capabilities changed",
                _plain(server["capabilities"]),
                result.get("capabilities", _MISSING),
            )
        if "instructions" in server or "instructions" in result:
            self.compare.changes(
                step,
                "server-info-changed",
                "instructions changed",
                server.get("instructions", _MISSING),
                result.get("instructions", _MISSING),
            )

    def _refuse(self, message: dict[str, Any]) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": message.get("id"),
            "error": {"code": INTERNAL_ERROR, "message": "not during the handshake"},
        }

    def steps(self) -> None:
        requests = [
            s
            for s in self.script.steps
            if isinstance(s.raw.get("expect"), dict)
            and isinstance(s.raw["expect"].get("method"), str)
        ]
        self.report.recorded = len(requests)
        if len(requests) > _PROGRESS_EVERY:
            self.say(f"replaying {len(requests)} recorded requests against {self.report.target}")
        for number, step in enumerate(requests, start=1):
            expect = step.raw["expect"]
            method = expect["method"]
            label = step.raw.get("label")
            name = f"step {step.index}{f' ({label})' if isinstance(label, str) else ''} {method}"
            reply = step.raw.get("reply") or {}
            concrete = _Concrete()
            params = self._params(method, expect.get("params", _MISSING), concrete)
            if concrete.missing_cursor:
                self.compare.add(
                    name,
                    "not-replayed",
                    "/params/cursor",
                    "not replayed: the live server gave no nextCursor for this next page",
                )
                continue
            if concrete.lacking:
                self.report.notes.append(
                    f"{name}: the recording kept only a pattern for {', '.join(concrete.lacking)} "
                    "(a redacted secret or an object); replayed with a stand-in value"
                )
            asked = _server_requests({"reply": reply})
            started = time.monotonic()
            answer = self.live.request(
                method, self._meta(params), self._server_asks(name, asked), self.timeout
            )
            self.report.requests += 1
            if number % _PROGRESS_EVERY == 0 or time.monotonic() - started > 5.0:
                self.say(f"replayed {number} of {len(requests)} requests ({name})")
            if not self._judge(name, method, reply, answer):
                left = len(requests) - number
                if left:
                    self.compare.add(
                        name,
                        "not-replayed",
                        "",
                        f"the server is gone; {_count(left, 'later request')} not replayed",
                    )
                return

    def _judge(self, name: str, method: str, reply: dict[str, Any], answer: Answer) -> bool:
        """Compare one answer; False: the server is gone."""
        if answer.message is None:
            if "fault" in reply:
                self.report.notes.append(f"{name}: unanswered when recorded, unanswered now")
            else:
                self.compare.add(name, "no-answer", "", f"no answer: {answer.failure}")
            return not answer.ended
        result = answer.message.get("result")
        if isinstance(result, dict):
            self.results[method] = result
            if method == "tools/list" and isinstance(self.live, LiveHttp):
                self.live.param_headers.update(declared_headers(result.get("tools")))
        if "fault" in reply:
            self.report.notes.append(
                f"{name}: unanswered when recorded (a partial recording); answered now"
            )
            return True
        self.compare.answer(name, method, dict(reply), answer.message)
        return True


def _server_requests(step: Any) -> list[dict[str, Any]]:
    """The requests the server sent at a step: in its reply's `before`, or as the step."""
    reply = step.get("reply")
    sent = [*(reply.get("before", []) if isinstance(reply, dict) else [])]
    if isinstance(step.get("send"), dict):
        sent.append(step["send"])
    return [m for m in sent if isinstance(m, dict) and "id" in m and "method" in m]


def _has_operator(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k.startswith("$") for k in value) or any(
            _has_operator(v) for v in value.values()
        )
    if isinstance(value, list):
        return any(_has_operator(v) for v in value)
    return False


def _plain(value: Any) -> Any:
    """A frozen mapping of the script as plain JSON."""
    return json.loads(json.dumps(value, default=dict))


def check_drift(
    script: Path,
    *,
    command: Sequence[str] | None = None,
    url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    say: Callable[[str], None] = lambda line: None,
) -> DriftReport:
    """Replay the recording at `script` against the live server (`command` over stdio, or
    the Streamable HTTP endpoint at `url`) and report what differs.

    Raises RecordError when the check cannot run: a script that does not load, a server
    that does not start or answer its handshake, a URL that does not answer.
    """
    try:
        loaded = load_script(script)
    except ScriptError as exc:
        raise RecordError(f"--check {exc}") from None
    except OSError as exc:
        raise RecordError(f"--check {script}: {exc.strerror or exc}") from None
    if (command is None) == (url is None):
        raise RecordError("the drift check needs the live server: --stdio -- CMD, or --http URL")
    if url is not None and loaded.transports == ("sse-legacy",):
        raise RecordError(
            f"--check {script}: a recording of an HTTP+SSE server; the drift check speaks "
            "Streamable HTTP and stdio: check the server over one of those"
        )
    target = " ".join(command) if command is not None else str(url)
    report = DriftReport(str(script), target, loaded.revisions[0])
    live: Live = LiveStdio(command) if command is not None else LiveHttp(str(url), timeout)
    try:
        replay = _Replay(loaded, live, report, timeout, say)
        if isinstance(live, LiveStdio):
            try:
                replay.handshake()
            except RecordError as exc:
                if live.gone:
                    raise RecordError(
                        f"the server command did not start: it {live.why_ended()} before it "
                        f"answered the handshake ({target}); check the command after --"
                    ) from exc
                raise
        else:
            replay.handshake()
        replay.steps()
    finally:
        live.close()
    return report
