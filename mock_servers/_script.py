"""Scripts: the fixture format (version 1) that tells a mock server what to do.

A script is JSON, checked on load against `schemas/script-v1.schema.json`, then against
the MCP schema of each revision it declares: every message the mock would send must be
one a conformant server may send, unless the step says it breaks the spec on purpose
(`"violation": "why"`). A mock that broke the spec by accident would give clients false
verdicts. Every problem is reported as one line: file, JSON pointer, reason, fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jsonschema

from harness.protocol import HANDSHAKE_REVISIONS, REVISIONS, is_stateless
from mock_servers._patterns import OPERATORS, is_operator, match

__all__ = [
    "FORMAT_VERSION",
    "HttpSettings",
    "Script",
    "ScriptError",
    "StdioSettings",
    "Step",
    "complete_stateless_result",
    "load_script",
    "parse_script",
    "script_schema",
]

FORMAT_VERSION = 1
Transport = Literal["stdio", "http", "sse-legacy"]
StepKind = Literal["expect", "send", "fault"]


class ScriptError(ValueError):
    """A script that cannot be used; `str()` is one line: where, what, and the fix."""

    def __init__(self, source: str, pointer: str, reason: str, fix: str) -> None:
        self.source = source
        self.pointer = pointer
        self.reason = reason
        self.fix = fix
        super().__init__(f"{source}: {pointer or '/'}: {reason}; fix: {fix}")


@cache
def script_schema() -> dict[str, Any]:
    """The JSON Schema of script format version 1."""
    text = (
        resources.files("mock_servers")
        .joinpath("schemas/script-v1.schema.json")
        .read_text(encoding="utf-8")
    )
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(script_schema())


@dataclass(frozen=True)
class Step:
    index: int
    kind: StepKind
    raw: Mapping[str, Any]

    @property
    def label(self) -> str:
        given = self.raw.get("label")
        if isinstance(given, str):
            return f"step {self.index} ({given})"
        if self.kind == "expect":
            method = self.raw["expect"].get("method")
            what = (
                method
                if isinstance(method, str)
                else "a response"
                if "id" in self.raw["expect"]
                else "a message"
            )
            return f"step {self.index} (expect {what})"
        if self.kind == "send":
            return f"step {self.index} (send {self.raw['send'].get('method', 'a response')})"
        return f"step {self.index} (fault {self.raw['fault']['kind']})"

    @property
    def pointer(self) -> str:
        return f"/steps/{self.index}"


@dataclass(frozen=True)
class HttpSettings:
    path: str = "/mcp"
    sessions: bool = True
    get: Literal["stream", "405"] = "stream"
    delete: Literal["accept", "405"] = "accept"
    reply_as: Literal["json", "sse"] = "json"
    check_origin: bool = True
    legacy_post: Literal["405", "404", "400"] = "405"
    """HTTP+SSE: how a POST to the SSE endpoint is refused (a client trying Streamable
    HTTP first sees this, and falls back on any of the three)."""


@dataclass(frozen=True)
class StdioSettings:
    on_eof: Literal["exit", "ignore"] = "exit"
    on_sigterm: Literal["exit", "ignore"] = "exit"


@dataclass(frozen=True)
class Script:
    name: str
    revisions: tuple[str, ...]
    transports: tuple[Transport, ...]
    steps: tuple[Step, ...]
    source: str = "<script>"
    description: str = ""
    server: Mapping[str, Any] = field(default_factory=dict)
    http: HttpSettings = field(default_factory=HttpSettings)
    stdio: StdioSettings = field(default_factory=StdioSettings)
    defaults: Mapping[str, bool] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict)

    def default_enabled(self, name: str) -> bool:
        return self.defaults.get(name, True)

    def pick_revision(self, wanted: str | None) -> str:
        """The revision to serve: `wanted`, or the newest the script declares."""
        if wanted is None:
            return self.revisions[-1]
        if wanted not in self.revisions:
            raise ScriptError(
                self.source,
                "/revisions",
                f"the script does not declare revision {wanted}",
                f"serve one of {', '.join(self.revisions)}, or add {wanted} to the script",
            )
        return wanted


def default_transports(revisions: Sequence[str]) -> tuple[Transport, ...]:
    """stdio always; Streamable HTTP from 2025-03-26; HTTP+SSE for 2024-11-05."""
    out: list[Transport] = ["stdio"]
    if any(r != "2024-11-05" for r in revisions):
        out.append("http")
    if "2024-11-05" in revisions:
        out.append("sse-legacy")
    return tuple(out)


def load_script(path: str | Path) -> Script:
    """Read, check and return the script at `path` (ScriptError on any problem)."""
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScriptError(source, "", "no such file", "check the path") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(source, "", f"cannot read it: {exc}", "save it as UTF-8 JSON") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScriptError(
            source,
            "",
            f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
            "correct the JSON syntax there",
        ) from None
    return parse_script(data, source=source)


def parse_script(data: Any, *, source: str = "<script>") -> Script:
    """Check decoded script JSON and build the Script (ScriptError on any problem)."""
    _check_format(data, source)
    revisions = tuple(r for r in REVISIONS if r in data["revisions"])
    transports = tuple(data.get("transports") or default_transports(revisions))
    steps = tuple(Step(i, _kind(raw), raw) for i, raw in enumerate(data["steps"]))
    script = Script(
        name=data["name"],
        revisions=revisions,
        transports=transports,
        steps=steps,
        source=source,
        description=data.get("description", ""),
        server=data.get("server", {}),
        http=HttpSettings(**data.get("http", {})),
        stdio=StdioSettings(**data.get("stdio", {})),
        defaults=data.get("defaults", {}),
        raw=data,
    )
    _check_semantics(script)
    _check_conformance(script)
    return script


def _kind(raw: Mapping[str, Any]) -> StepKind:
    kinds: tuple[StepKind, ...] = ("expect", "send", "fault")
    for kind in kinds:
        if kind in raw:
            return kind
    raise AssertionError("the schema admits no other step")


# -- format check ------------------------------------------------------------------------

_STEP_VARIANTS: dict[str, int] = {"expect": 0, "send": 1, "fault": 2}


def _pointer(path: Sequence[Any]) -> str:
    return "".join(f"/{str(p).replace('~', '~0').replace('/', '~1')}" for p in path)


def _check_format(data: Any, source: str) -> None:
    if not isinstance(data, dict):
        raise ScriptError(
            source, "", "a script is a JSON object", 'start from {"format_version": 1, ...}'
        )
    if data.get("format_version") != FORMAT_VERSION:
        raise ScriptError(
            source,
            "/format_version",
            f"format_version is {json.dumps(data.get('format_version'))}, "
            f"this version reads {FORMAT_VERSION}",
            f'set "format_version": {FORMAT_VERSION} (and follow docs/scripts.md)',
        )
    # Steps are checked one by one against their own variant: a oneOf over all variants
    # would report "not valid under any of the given schemas" instead of the real reason.
    steps = data.get("steps")
    if isinstance(steps, list):
        variants = script_schema()["$defs"]["step"]["oneOf"]
        for index, step in enumerate(steps):
            pointer = f"/steps/{index}"
            if not isinstance(step, dict):
                raise ScriptError(
                    source,
                    pointer,
                    "a step is a JSON object",
                    'write {"expect": ...}, {"send": ...} or {"fault": ...}',
                )
            kinds = [k for k in _STEP_VARIANTS if k in step]
            if len(kinds) != 1:
                found = " and ".join(kinds) if kinds else "none of them"
                raise ScriptError(
                    source,
                    pointer,
                    f'a step has exactly one of "expect", "send", "fault"; it has {found}',
                    "split it into one step per action",
                )
            sub = {"$defs": script_schema()["$defs"], **variants[_STEP_VARIANTS[kinds[0]]]}
            _raise_first(jsonschema.Draft202012Validator(sub), step, source, pointer)
    _raise_first(_validator(), data, source, "")


def _raise_first(
    validator: jsonschema.Draft202012Validator, value: Any, source: str, base: str
) -> None:
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return
    pointer = base + _pointer(error.absolute_path)
    raise ScriptError(source, pointer, _reason(error), _fix(error))


def _allowed_members(error: jsonschema.ValidationError) -> list[str]:
    schema = error.schema
    return sorted(schema.get("properties", {})) if isinstance(schema, Mapping) else []


def _reason(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        allowed = _allowed_members(error)
        extra = (
            sorted(set(error.instance) - set(allowed)) if isinstance(error.instance, dict) else []
        )
        return f"unknown member {', '.join(map(repr, extra))}"
    if error.validator == "required":
        return str(error.message).replace("is a required property", "is missing")
    return str(error.message)


def _fix(error: jsonschema.ValidationError) -> str:
    kind = error.validator
    if kind == "additionalProperties":
        allowed = ", ".join(_allowed_members(error))
        return f"remove it or correct its spelling (allowed here: {allowed})"
    if kind == "required":
        return "add it"
    if kind == "enum":
        choices = error.validator_value if isinstance(error.validator_value, list) else []
        return "use one of " + ", ".join(json.dumps(v) for v in choices)
    if kind == "const":
        return f"use {json.dumps(error.validator_value)}"
    if kind == "type":
        return f"give a value of type {error.validator_value}"
    if kind == "pattern":
        return f"match the pattern {error.validator_value}"
    if kind in ("minimum", "maximum", "minItems", "uniqueItems"):
        return f"respect {kind} {json.dumps(error.validator_value)}"
    return "see docs/scripts.md for the format"


# -- meaning checks -----------------------------------------------------------------------


def _check_semantics(script: Script) -> None:
    src = script.source
    for transport in script.transports:
        if transport == "sse-legacy" and not set(script.revisions) & set(HANDSHAKE_REVISIONS[:1]):
            raise ScriptError(
                src,
                "/transports",
                "the HTTP+SSE transport is the 2024-11-05 one",
                'add "2024-11-05" to revisions or drop "sse-legacy"',
            )
        if transport == "http" and script.revisions == ("2024-11-05",):
            raise ScriptError(
                src,
                "/transports",
                "Streamable HTTP does not exist in 2024-11-05",
                'use "sse-legacy" for 2024-11-05',
            )
    labels: dict[str, int] = {}
    for step in script.steps:
        label = step.raw.get("label")
        if label is not None:
            if label in labels:
                raise ScriptError(
                    src,
                    f"{step.pointer}/label",
                    f"the label {label!r} is already used by step {labels[label]}",
                    "give every step its own label",
                )
            labels[label] = step.index
        if step.kind == "expect":
            _check_pattern(script, step.raw["expect"], f"{step.pointer}/expect")
            reply = step.raw.get("reply", {})
            answers = [k for k in ("result", "error", "fault") if k in reply]
            if len(answers) > 1:
                raise ScriptError(
                    src,
                    f"{step.pointer}/reply",
                    f"a reply has one of result, error or fault; it has {' and '.join(answers)}",
                    "keep one",
                )
            events = reply.get("sse", {}).get("events", [])
            for i, item in enumerate(events):
                payload = [
                    k for k in ("comment", "prime", "message", "response", "raw") if k in item
                ]
                if len(payload) > 1:
                    raise ScriptError(
                        src,
                        f"{step.pointer}/reply/sse/events/{i}",
                        f"an SSE item carries one payload; it has {' and '.join(payload)}",
                        "split it into several items",
                    )
            if sum(1 for item in events if item.get("response")) > 1:
                raise ScriptError(
                    src,
                    f"{step.pointer}/reply/sse/events",
                    "the response can be placed only once",
                    'keep one {"response": true}',
                )


def _check_pattern(script: Script, pattern: Any, pointer: str) -> None:
    if isinstance(pattern, dict):
        dollar = [k for k in pattern if k.startswith("$")]
        if dollar and not is_operator(pattern):
            raise ScriptError(
                script.source,
                pointer,
                f"{', '.join(dollar)} mixed with plain members",
                "put the operator in an object of its own",
            )
        for key in dollar:
            if key not in OPERATORS:
                raise ScriptError(
                    script.source,
                    f"{pointer}/{key}",
                    f"unknown pattern operator {key}",
                    f"use one of {', '.join(sorted(OPERATORS))}",
                )
        for key, sub in pattern.items():
            if key in ("$any",) and isinstance(sub, list):
                for i, item in enumerate(sub):
                    _check_pattern(script, item, f"{pointer}/{key}/{i}")
            elif not key.startswith("$") or key == "$contains":
                _check_pattern(script, sub, f"{pointer}/{key}")
    elif isinstance(pattern, list):
        for i, item in enumerate(pattern):
            _check_pattern(script, item, f"{pointer}/{i}")


# -- conformance of what the mock sends ----------------------------------------------------------


def _check_conformance(script: Script) -> None:
    from harness.protocol import validate  # deferred: loading MCP schemas is not free

    _check_log_opt_in(script)
    for step in script.steps:
        for revision in script.revisions:
            for pointer, message, request_method in _server_messages(step):
                if _violation(step, pointer) or "violation" in message:
                    continue
                if is_stateless(revision) and isinstance(message.get("result"), dict):
                    # Check what the engine will really send (see complete_stateless_result).
                    result = complete_stateless_result(request_method, message["result"])
                    message = {**message, "result": result}
                problems = validate(message, revision, "server", request_method=request_method)
                if problems:
                    first = problems[0]
                    raise ScriptError(
                        script.source,
                        pointer + _message_pointer(first.pointer, pointer),
                        f"not a valid {revision} server message: {first.reason}",
                        _VIOLATION_FIX,
                    )


# The syslog severities of notifications/message, least severe first (RFC 5424).
_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"


def _check_log_opt_in(script: Script) -> None:
    """2026-07-28: a log message tied to a request only if that request opted in.

    The server MUST NOT send notifications/message for a request without `_meta`
    logLevel, nor below the level it asked for. Known statically when the step's pattern
    spells out (or leaves out) that member; an operator on the way to it (`$any` on
    `_meta`, for scripts shared with older revisions) leaves it to the engine at run time.
    """
    if not any(is_stateless(r) for r in script.revisions):
        return
    for step in script.steps:
        send = step.raw.get("send", {})
        if send.get("method") == "notifications/message" and not _violation(step, ""):
            raise ScriptError(
                script.source,
                f"{step.pointer}/send",
                "at 2026-07-28 a log message goes only with a request that opted in "
                f"(_meta {_META_LOG_LEVEL}); no subscriptions/listen filter admits one",
                "send it in the reply's before of such a request, or mark the step with "
                '"violation": "<why>"',
            )
        if step.kind != "expect" or "violation" in step.raw.get("reply", {}):
            continue
        reply = step.raw.get("reply", {})
        logs = [
            (f"{step.pointer}/reply/before/{i}", m) for i, m in enumerate(reply.get("before", []))
        ] + [
            (f"{step.pointer}/reply/sse/events/{i}/message", item["message"])
            for i, item in enumerate(reply.get("sse", {}).get("events", []))
            if isinstance(item.get("message"), dict)
        ]
        for pointer, message in logs:
            if message.get("method") != "notifications/message" or "violation" in message:
                continue
            level = (message.get("params") or {}).get("level")
            problem = _log_level_admitted(step.raw["expect"], level)
            if problem is not None:
                allowed = (
                    _LOG_LEVELS[: _LOG_LEVELS.index(level) + 1] if level in _LOG_LEVELS else []
                )
                raise ScriptError(
                    script.source,
                    pointer,
                    f"at 2026-07-28 a server must not send this {level} log message to {problem}",
                    f'require the opt-in in the expect pattern, e.g. "params": {{"_meta": '
                    f'{{"{_META_LOG_LEVEL}": {{"$any": {json.dumps(allowed)}}}}}}}, and answer '
                    "the other requests in a step without it; or mark the message with "
                    '"violation": "<why>"',
                )


def _log_level_admitted(pattern: Any, level: Any) -> str | None:
    """Which request the pattern admits that may not get a `level` log message (None: none,
    or not known without running it)."""
    sub: Any = pattern
    for key in ("params", "_meta", _META_LOG_LEVEL):
        if is_operator(sub) or not isinstance(sub, dict):
            return None  # an operator decides: checked by the engine at run time
        if key not in sub:
            return f"a request without _meta {_META_LOG_LEVEL} (its pattern admits one)"
        sub = sub[key]
    if not match({"v": sub}, {}):
        return f"a request without _meta {_META_LOG_LEVEL} (its pattern admits one)"
    if level not in _LOG_LEVELS:
        return None  # the schema check names an unknown level
    above = [
        wanted
        for wanted in _LOG_LEVELS[_LOG_LEVELS.index(level) + 1 :]
        if not match({"v": sub}, {"v": wanted})
    ]
    if above:
        return f"a request asking for {above[0]} and above (its pattern admits it)"
    return None


_VIOLATION_FIX = (
    'correct it, or mark the step with "violation": "<why>" if it breaks the spec on purpose'
)


# 2026-07-28 results that carry caching hints (server/utilities/caching).
_CACHEABLE = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)


def complete_stateless_result(method: str | None, result: Mapping[str, Any]) -> dict[str, Any]:
    """A scripted result as a 2026-07-28 server sends it.

    Every result carries `resultType`, and list and read results carry `ttlMs` and
    `cacheScope`. Scripts shared with older revisions leave these out; the mock fills in
    the most conservative values (complete; ttlMs 0, i.e. do not cache; private).
    """
    out = {"resultType": "complete", **result}
    if method in _CACHEABLE:
        out = {"ttlMs": 0, "cacheScope": "private", **out}
    return out


def _violation(step: Step, pointer: str) -> bool:
    if step.kind == "send":
        return "violation" in step.raw
    return "violation" in step.raw.get("reply", {})


def _message_pointer(inner: str, outer: str) -> str:
    # Scripted replies hold only `result`/`error`: map the message pointer back to them.
    for member in ("/result", "/error"):
        if outer.endswith(member) and inner.startswith(member):
            return inner[len(member) :]
    return inner


def _server_messages(step: Step) -> list[tuple[str, dict[str, Any], str | None]]:
    """(pointer, full JSON-RPC message, method answered) for each message the step sends."""
    out: list[tuple[str, dict[str, Any], str | None]] = []
    if step.kind == "send":
        out.append((f"{step.pointer}/send", {"jsonrpc": "2.0", **step.raw["send"]}, None))
        return out
    if step.kind != "expect":
        return out
    reply = step.raw.get("reply", {})
    method = step.raw["expect"].get("method")
    method = method if isinstance(method, str) else None
    if method is not None and not method.startswith("notifications/"):
        if "result" in reply and not _has_operators(reply["result"]):
            out.append(
                (
                    f"{step.pointer}/reply/result",
                    {"jsonrpc": "2.0", "id": 1, "result": reply["result"]},
                    method,
                )
            )
        if "error" in reply and not _has_operators(reply["error"]):
            out.append(
                (
                    f"{step.pointer}/reply/error",
                    {"jsonrpc": "2.0", "id": 1, "error": reply["error"]},
                    method,
                )
            )
    for i, message in enumerate(reply.get("before", [])):
        if _has_operators(message):
            continue  # checked when filled in, like templated results
        out.append((f"{step.pointer}/reply/before/{i}", {"jsonrpc": "2.0", **message}, None))
    for i, item in enumerate(reply.get("sse", {}).get("events", [])):
        if "message" in item:
            out.append(
                (
                    f"{step.pointer}/reply/sse/events/{i}/message",
                    {"jsonrpc": "2.0", **item["message"]},
                    None,
                )
            )
    return out


def _has_operators(value: Any) -> bool:
    """Templated replies (`{"$request": ...}`) are checked when they are filled in."""
    if isinstance(value, dict):
        return "$request" in value or any(_has_operators(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_operators(v) for v in value)
    return False
