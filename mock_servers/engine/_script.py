"""Scripts: the fixture format (version 1) that tells a mock server what to do.

A script is JSON, checked on load against `schemas/script-v1.schema.json`, then against
the MCP schema of each revision it declares: every message the mock would send must be
one a conformant server may send, unless that message is marked as breaking the spec on
purpose (`"violation": "why"`, per message: docs/scripts.md). A message with `$request`
templates is checked here for what no request could mend; what only exists at run time
(the filled templates, built-in answers) is checked by the send gate (`_send_gate.py`).
A mock that broke the spec by accident would give clients false verdicts. Every problem
is reported as one line: file, JSON pointer, reason, fix.
"""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import jsonschema

from harness.protocol import (
    HANDSHAKE_REVISIONS,
    MAX_DEPTH,
    META_SUBSCRIPTION_ID,
    REVISIONS,
    is_stateless,
    nested_deeper_than,
    validate,
)
from mock_servers.engine._auth_settings import AuthSettings, auth_settings
from mock_servers.engine._patterns import OPERATORS, is_operator, match
from mock_servers.engine._send_gate import (
    BASE_URL,
    BASE_URL_STAND_IN,
    base_url_pointers,
    fill_base_url,
    jsonrpc_in_text,
    split_mark,
    template_pointers,
    templated_problem,
)

__all__ = [
    "FORMAT_VERSION",
    "HttpSettings",
    "Problem",
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


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a script: where (a JSON pointer), what, and the fix."""

    pointer: str
    reason: str
    fix: str

    def line(self, source: str) -> str:
        return f"{source}: {self.pointer or '/'}: {self.reason}; fix: {self.fix}"


class ScriptError(ValueError):
    """A script that cannot be used; `str()` is one line: where, what, and the fix.

    `pointer`, `reason` and `fix` are the first problem's; `problems` lists every problem
    found (the format's, then the meaning's, then the conformance's: `validate` prints
    them all, one a line), and `str()` says how many more there are.
    """

    def __init__(
        self, source: str, pointer: str, reason: str, fix: str, *, more: Sequence[Problem] = ()
    ) -> None:
        self.source = source
        self.pointer = pointer
        self.reason = reason
        self.fix = fix
        self.problems: tuple[Problem, ...] = (Problem(pointer, reason, fix), *more)
        extra = ""
        if more:
            plural = "s" if len(more) > 1 else ""
            extra = f" (and {len(more)} more problem{plural}: mcp-testbench validate lists all)"
        super().__init__(self.problems[0].line(source) + extra)

    @classmethod
    def of(cls, source: str, problems: Sequence[Problem]) -> ScriptError:
        first, *rest = problems
        return cls(source, first.pointer, first.reason, first.fix, more=rest)

    def lines(self) -> list[str]:
        """Every problem as one line."""
        return [problem.line(self.source) for problem in self.problems]


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

    @cached_property  # named in every transcript entry of a step: worked out once
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
    documents: Mapping[str, Any] = field(default_factory=dict)
    """JSON documents served at paths of their own (GET: 200 and the value), the way a
    server serves what a tool schema's `$base_url` template points at."""


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
    auth: AuthSettings | None = None

    def default_enabled(self, name: str) -> bool:
        return self.defaults.get(name, True)

    def listen_step(self, send: Step) -> int | None:
        """The index of the listen step a send step names (`"listen": label`), or None."""
        return self.labelled(send.raw.get("listen"))

    def labelled(self, label: Any) -> int | None:
        """The index of the step with this label, or None (also for no label)."""
        if label is None:
            return None
        return next((s.index for s in self.steps if s.raw.get("label") == label), None)

    def gates(self, step: Step) -> tuple[int | None, int | None]:
        """The steps whose consumption makes an expect step active (`after`) and retires
        it (`until`), by index, or None."""
        return self.labelled(step.raw.get("after")), self.labelled(step.raw.get("until"))

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
    """Read, check and return the script at `path` (ScriptError on any problem).

    Checked once per process while the file is unchanged (its size and modification
    time): checking a script (its format, and every scripted message against the schema)
    takes tens of milliseconds, and collection, every run and every stdio mock load it. A
    Script is frozen and the mocks copy what they send from it, so sharing one is safe. A
    broken script raises its ScriptError every time."""
    try:
        stat = os.stat(path)
    except OSError:
        return _read_script(Path(path))  # its ScriptError says what is wrong
    return _checked_script(str(path), os.path.abspath(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=512)
def _checked_script(source: str, _where: str, _mtime_ns: int, _size: int) -> Script:
    return _read_script(Path(source))


def _read_script(path: Path) -> Script:
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
    except RecursionError:
        raise _too_deep(source) from None
    if nested_deeper_than(data, _MAX_SCRIPT_DEPTH):
        raise _too_deep(source)
    return parse_script(data, source=source)


def _too_deep(source: str) -> ScriptError:
    return ScriptError(
        source,
        "",
        f"nested more than {_MAX_SCRIPT_DEPTH} levels deep",
        f"no message may nest more than {MAX_DEPTH} levels (a parse error to any reader)",
    )


# A script holds its messages a few levels down (steps, a step, its reply).
_MAX_SCRIPT_DEPTH = MAX_DEPTH + 16


def parse_script(data: Any, *, source: str = "<script>") -> Script:
    """Check decoded script JSON and build the Script (ScriptError on any problem)."""
    problems = _check_format(data, source)
    if problems:
        raise ScriptError.of(source, problems)
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
        auth=auth_settings(data["auth"]) if "auth" in data else None,
    )
    problems = _check_semantics(script)
    try:
        _check_conformance(script)
    except ScriptError as exc:
        problems += exc.problems
    if problems:
        raise ScriptError.of(source, problems)
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


def _check_format(data: Any, source: str) -> list[Problem]:
    """Every format problem of `data` (nothing else is checked until there are none)."""
    if not isinstance(data, dict):
        return [Problem("", "a script is a JSON object", 'start from {"format_version": 1, ...}')]
    if data.get("format_version") != FORMAT_VERSION:
        return [
            Problem(
                "/format_version",
                f"format_version is {json.dumps(data.get('format_version'))}, "
                f"this version reads {FORMAT_VERSION}",
                f'set "format_version": {FORMAT_VERSION} (and follow docs/scripts.md)',
            )
        ]
    problems: list[Problem] = []
    # Steps are checked one by one against their own variant: a oneOf over all variants
    # would report "not valid under any of the given schemas" instead of the real reason.
    steps = data.get("steps")
    if isinstance(steps, list):
        for index, step in enumerate(steps):
            problems += _check_step_format(step, f"/steps/{index}")
    for error in _validator().iter_errors(data):
        path = list(error.absolute_path)
        if isinstance(steps, list) and len(path) >= 2 and path[0] == "steps":
            continue  # reported by the step's own check
        problems += _problems_of(error, "")
    return _unique(problems)


_STEP_KEYS = ("expect", "send", "fault")


def _check_step_format(step: Any, pointer: str) -> list[Problem]:
    if not isinstance(step, dict):
        return [
            Problem(
                pointer,
                "a step is a JSON object",
                'write {"expect": ...}, {"send": ...} or {"fault": ...}',
            )
        ]
    kinds = [k for k in _STEP_VARIANTS if k in step]
    if len(kinds) > 1:
        return [
            Problem(
                pointer,
                f'a step has exactly one of "expect", "send", "fault"; it has '
                f"{' and '.join(kinds)}",
                "split it into one step per action",
            )
        ]
    variants = script_schema()["$defs"]["step"]["oneOf"]
    if not kinds:
        known = sorted({key for variant in variants for key in variant["properties"]})
        unknown = [key for key in step if key not in known]
        guesses = [(key, _closest(key, _STEP_KEYS) or _closest(key, known)) for key in unknown]
        if any(guess in _STEP_KEYS for _, guess in guesses):
            return [
                Problem(
                    pointer,
                    f"unknown member {key!r} in a step",
                    f"correct its spelling to {guess!r}"
                    if guess
                    else f"remove it (allowed in a step: {', '.join(known)})",
                )
                for key, guess in guesses
            ]
        has = f"; it has {', '.join(map(repr, step))}" if step else ""
        return [
            Problem(
                pointer,
                f'a step needs one of "expect", "send" or "fault"{has}',
                'add "expect" (a client message to wait for), "send" (a server message) '
                'or "fault" (a deliberate failure); see docs/scripts.md',
            )
        ]
    sub = {"$defs": script_schema()["$defs"], **variants[_STEP_VARIANTS[kinds[0]]]}
    problems: list[Problem] = []
    for error in jsonschema.Draft202012Validator(sub).iter_errors(step):
        problems += _problems_of(error, pointer)
    return problems


def _problems_of(error: jsonschema.ValidationError, base: str) -> list[Problem]:
    """The problems one schema error stands for (a oneOf's most telling branch)."""
    best = jsonschema.exceptions.best_match([error])  # descends into a oneOf's branches
    if best is not None:
        error = best
    pointer = base + _pointer(error.absolute_path)
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = _allowed_members(error)
        extra = sorted(set(error.instance) - set(allowed))
        out = []
        for key in extra:
            guess = _closest(key, allowed)
            listed = f"(allowed here: {', '.join(allowed)})"
            fix = (
                f"correct its spelling to {guess!r}, or remove it {listed}"
                if guess
                else f"remove it or correct its spelling {listed}"
            )
            out.append(Problem(pointer, f"unknown member {key!r}", fix))
        return out
    return [Problem(pointer, _reason(error), _fix(error))]


def _closest(word: str, known: Sequence[str]) -> str | None:
    found = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return found[0] if found else None


def _unique(problems: Sequence[Problem]) -> list[Problem]:
    seen: set[Problem] = set()
    out = []
    for problem in problems:
        if problem not in seen:
            seen.add(problem)
            out.append(problem)
    return out


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


def _check_semantics(script: Script) -> list[Problem]:
    """Every problem of meaning: what the format admits but cannot work as written."""
    problems: list[Problem] = []
    for transport in script.transports:
        if transport == "sse-legacy" and not set(script.revisions) & set(HANDSHAKE_REVISIONS[:1]):
            problems.append(
                Problem(
                    "/transports",
                    "the HTTP+SSE transport is the 2024-11-05 one",
                    'add "2024-11-05" to revisions or drop "sse-legacy"',
                )
            )
        if transport == "http" and script.revisions == ("2024-11-05",):
            problems.append(
                Problem(
                    "/transports",
                    "Streamable HTTP does not exist in 2024-11-05",
                    'use "sse-legacy" for 2024-11-05',
                )
            )
    problems += _check_settings(script)
    labels: dict[str, int] = {}
    for step in script.steps:
        label = step.raw.get("label")
        if label is not None:
            if label in labels:
                problems.append(
                    Problem(
                        f"{step.pointer}/label",
                        f"the label {label!r} is already used by step {labels[label]}",
                        "give every step its own label",
                    )
                )
            else:
                labels[label] = step.index
        if step.kind == "fault":
            problems += _check_fault(script, step.raw["fault"], f"{step.pointer}/fault")
        if step.kind == "send" and "listen" in step.raw:
            problems += _check_send_listen(script, step)
        problems += _check_base_url(script, step)
        if step.kind != "expect":
            continue
        problems += _check_gates(script, step)
        problems += _check_message_pattern(step.raw["expect"], f"{step.pointer}/expect")
        if "http" in step.raw and not _over_http(script):
            problems.append(_stdio_only(script, f"{step.pointer}/http", "an http match"))
        reply = step.raw.get("reply", {})
        answers = [k for k in ("result", "error", "fault") if k in reply]
        if len(answers) > 1:
            problems.append(
                Problem(
                    f"{step.pointer}/reply",
                    f"a reply has one of result, error or fault; it has {' and '.join(answers)}",
                    "keep one",
                )
            )
        if "fault" in reply:
            problems += _check_fault(script, reply["fault"], f"{step.pointer}/reply/fault")
        if not _over_http(script):
            for member in _HTTP_REPLY_MEMBERS:
                if member in reply:
                    problems.append(
                        _stdio_only(script, f"{step.pointer}/reply/{member}", f"reply {member!r}")
                    )
        events = reply.get("sse", {}).get("events", [])
        for i, item in enumerate(events):
            payload = [k for k in ("comment", "prime", "message", "response", "raw") if k in item]
            if len(payload) > 1:
                problems.append(
                    Problem(
                        f"{step.pointer}/reply/sse/events/{i}",
                        f"an SSE item carries one payload; it has {' and '.join(payload)}",
                        "split it into several items",
                    )
                )
        if sum(1 for item in events if item.get("response")) > 1:
            problems.append(
                Problem(
                    f"{step.pointer}/reply/sse/events",
                    "the response can be placed only once",
                    'keep one {"response": true}',
                )
            )
    return problems


# Reply members that only an HTTP transport can carry out.
_HTTP_REPLY_MEMBERS = ("as", "status", "headers", "body", "sse")
# The members of a JSON-RPC message, which the top of an expect pattern names.
_JSONRPC_MEMBERS = ("jsonrpc", "id", "method", "params", "result", "error")
_STDIO_FAULTS = frozenset({"crash", "oversized_line", "stderr"})


def _over_http(script: Script) -> bool:
    return any(t in ("http", "sse-legacy") for t in script.transports)


def _stdio_only(script: Script, pointer: str, what: str) -> Problem:
    return Problem(
        pointer,
        f"{what} applies over HTTP only, and the script runs over {', '.join(script.transports)}",
        'remove it, or add "http" to transports',
    )


def _sessions_possible(script: Script) -> bool:
    """Whether some transport and revision of the script has sessions to expire."""
    handshake = [r for r in script.revisions if not is_stateless(r)]
    if "sse-legacy" in script.transports and "2024-11-05" in handshake:
        return True
    http_era = [r for r in handshake if r != "2024-11-05"]
    return "http" in script.transports and bool(http_era) and script.http.sessions


def _check_base_url(script: Script, step: Step) -> list[Problem]:
    """`$base_url` is the HTTP mock's own URL, filled in a reply's result, error and
    `before` messages: not over stdio, not in what goes out as written."""
    problems: list[Problem] = []
    for pointer, message, _method, _mark, filled in _server_messages(step):
        for inner in base_url_pointers(message):
            where = pointer + _message_pointer(inner, pointer)
            path = _resolve_pointer(message, inner)[BASE_URL]
            if not filled:
                problems.append(
                    Problem(
                        where,
                        f"{BASE_URL} is filled in a reply's result, error and before "
                        "messages only; here it would go out as written",
                        "move the value into a reply, or write the URL out",
                    )
                )
            elif "stdio" in script.transports:
                problems.append(
                    Problem(
                        where,
                        f"{BASE_URL} is the HTTP mock's own URL, and the script runs over stdio",
                        'remove "stdio" from transports',
                    )
                )
            if not (isinstance(path, str) and (path == "" or path.startswith("/"))):
                problems.append(
                    Problem(
                        where,
                        f"{BASE_URL} takes a path (what follows http://localhost:PORT), "
                        f"not {json.dumps(path)}",
                        'give a path starting with "/", e.g. {"$base_url": "/schemas/a.json"}',
                    )
                )
    return problems


def _resolve_pointer(document: Any, pointer: str) -> Any:
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        document = document[int(token)] if isinstance(document, list) else document[token]
    return document


def _check_send_listen(script: Script, step: Step) -> list[Problem]:
    """A send step's `listen` names an earlier subscriptions/listen step, at 2026-07-28."""
    index = script.listen_step(step)
    target = script.steps[index] if index is not None else None
    pointer = f"{step.pointer}/listen"
    if not any(is_stateless(r) for r in script.revisions):
        return [Problem(pointer, "subscriptions/listen exists from 2026-07-28 on", "drop it")]
    if target is None or target.index >= step.index:
        return [
            Problem(
                pointer,
                f"no step before this one has the label {step.raw['listen']!r}",
                "name the label of an earlier expect step of subscriptions/listen",
            )
        ]
    if target.kind != "expect" or target.raw["expect"].get("method") != "subscriptions/listen":
        return [
            Problem(
                pointer,
                f"{target.label} does not expect subscriptions/listen",
                "name the label of an expect step of subscriptions/listen",
            )
        ]
    return []


def _check_gates(script: Script, step: Step) -> list[Problem]:
    """`after` and `until` name another expect step by its label."""
    problems = []
    for member, index in zip(("after", "until"), script.gates(step), strict=True):
        if member not in step.raw:
            continue
        target = script.steps[index] if index is not None else None
        if target is None or target.kind != "expect" or target.index == step.index:
            problems.append(
                Problem(
                    f"{step.pointer}/{member}",
                    f"no other expect step has the label {step.raw[member]!r}",
                    "name the label of another expect step",
                )
            )
    return problems


def _check_fault(script: Script, fault: Mapping[str, Any], pointer: str) -> list[Problem]:
    kind = fault.get("kind")
    if kind == "expire_session" and not _sessions_possible(script):
        if not _over_http(script):
            why = f"the script runs over {', '.join(script.transports)} only"
        elif not script.http.sessions:
            why = 'the script turns sessions off ("http": {"sessions": false})'
        else:
            why = "2026-07-28 has no sessions"
        return [
            Problem(
                f"{pointer}/kind",
                f"expire_session has nothing to expire: {why}",
                "remove the fault, or serve a revision with sessions (2025-03-26 .. 2025-11-25) "
                "over HTTP",
            )
        ]
    if kind in _STDIO_FAULTS and "stdio" not in script.transports:
        return [
            Problem(
                f"{pointer}/kind",
                f"{kind} is a stdio fault, and the script runs over {', '.join(script.transports)}",
                'remove it, or add "stdio" to transports',
            )
        ]
    if kind == "close_stream" and not _over_http(script):
        return [_stdio_only(script, f"{pointer}/kind", "close_stream")]
    return []


def _check_settings(script: Script) -> list[Problem]:
    """Top-level settings that cannot apply to any revision or transport of the script."""
    raw = script.raw
    problems: list[Problem] = []
    stateless_only = all(is_stateless(r) for r in script.revisions)
    if "http" in raw and not _over_http(script):
        problems.append(_stdio_only(script, "/http", "the http settings"))
    elif stateless_only:
        for member in ("sessions", "get", "delete"):
            if member in raw.get("http", {}):
                problems.append(
                    Problem(
                        f"/http/{member}",
                        f"http.{member} has no effect at 2026-07-28 (no sessions, no GET "
                        "stream, no DELETE)",
                        "remove it, or add a revision from 2025-03-26 to 2025-11-25",
                    )
                )
    for path in script.http.documents:
        if path in (script.http.path, script.http.path.rstrip("/") + "/messages"):
            problems.append(
                Problem(
                    f"/http/documents/{path.replace('~', '~0').replace('/', '~1')}",
                    f"{path} is the MCP endpoint (or its HTTP+SSE messages path), not a document's",
                    "serve the document at another path",
                )
            )
    if "legacy_post" in raw.get("http", {}) and "sse-legacy" not in script.transports:
        problems.append(
            Problem(
                "/http/legacy_post",
                "http.legacy_post is how an HTTP+SSE server refuses a POST, and the script "
                "does not run over sse-legacy",
                'remove it, or add "2024-11-05" to revisions and "sse-legacy" to transports',
            )
        )
    if "stdio" in raw and "stdio" not in script.transports:
        problems.append(
            Problem(
                "/stdio",
                f"the stdio settings apply over stdio only, and the script runs over "
                f"{', '.join(script.transports)}",
                'remove them, or add "stdio" to transports',
            )
        )
    problems += _check_auth(script)
    server = raw.get("server", {})
    if "protocol_version" in server and stateless_only:
        problems.append(
            Problem(
                "/server/protocol_version",
                "server.protocol_version answers initialize, which 2026-07-28 does not have",
                "remove it, or use server.supported_versions (2026-07-28)",
            )
        )
    if "supported_versions" in server and not any(is_stateless(r) for r in script.revisions):
        problems.append(
            Problem(
                "/server/supported_versions",
                "server.supported_versions is for 2026-07-28 (server/discover, -32022), "
                "which the script does not declare",
                'remove it, or add "2026-07-28" to revisions (before it: server.protocol_version)',
            )
        )
    return problems


def _check_auth(script: Script) -> list[Problem]:
    """An `auth` section protects a Streamable HTTP endpoint, which 2025-03-26 introduced."""
    if script.auth is None:
        return []
    problems: list[Problem] = []
    if set(script.transports) != {"http"}:
        problems.append(
            Problem(
                "/auth",
                "authorization protects a Streamable HTTP endpoint, and the script also runs "
                f"over {', '.join(t for t in script.transports if t != 'http')}",
                'set "transports": ["http"]',
            )
        )
    if "2024-11-05" in script.revisions:
        problems.append(
            Problem(
                "/auth",
                "2024-11-05 has no authorization (it came with 2025-03-26)",
                'remove "2024-11-05" from revisions',
            )
        )
    methods = script.auth.token_endpoint_auth_methods
    for index, client in enumerate(script.auth.clients):
        if client.token_endpoint_auth_method not in methods:
            problems.append(
                Problem(
                    f"/auth/clients/{index}/token_endpoint_auth_method",
                    f"{client.token_endpoint_auth_method} is not among the server's "
                    f"token_endpoint_auth_methods ({', '.join(methods)})",
                    "use one of them, or add it there",
                )
            )
        if (client.client_secret is None) != (client.token_endpoint_auth_method == "none"):
            problems.append(
                Problem(
                    f"/auth/clients/{index}",
                    "a client has a secret exactly when its token_endpoint_auth_method is not none",
                    "give it a client_secret, or set token_endpoint_auth_method to none",
                )
            )
    return problems


def _check_message_pattern(pattern: Any, pointer: str) -> list[Problem]:
    """An expect pattern: JSON-RPC members at its top, valid operators everywhere."""
    problems: list[Problem] = []
    if isinstance(pattern, dict) and not is_operator(pattern):
        for key in pattern:
            if key.startswith("$") or key in _JSONRPC_MEMBERS:
                continue
            guess = _closest(key, _JSONRPC_MEMBERS)
            hint = f"correct its spelling to {guess!r}" if guess else "remove it"
            problems.append(
                Problem(
                    f"{pointer}/{_pointer([key])[1:]}",
                    f"{key!r} is not a member of a JSON-RPC message, so no message matches",
                    f"{hint} (a pattern's top names {', '.join(_JSONRPC_MEMBERS)})",
                )
            )
    return problems + _check_pattern(pattern, pointer)


def _check_pattern(pattern: Any, pointer: str) -> list[Problem]:
    problems: list[Problem] = []
    if isinstance(pattern, dict):
        dollar = [k for k in pattern if k.startswith("$")]
        if dollar and not is_operator(pattern):
            problems.append(
                Problem(
                    pointer,
                    f"{', '.join(dollar)} mixed with plain members",
                    "put the operator in an object of its own",
                )
            )
        for key in dollar:
            if key not in OPERATORS:
                guess = _closest(key, sorted(OPERATORS))
                hint = f"correct its spelling to {guess}; " if guess else ""
                problems.append(
                    Problem(
                        f"{pointer}/{key}",
                        f"unknown pattern operator {key}",
                        f"{hint}use one of {', '.join(sorted(OPERATORS))}",
                    )
                )
        for key, sub in pattern.items():
            where = f"{pointer}/{_pointer([key])[1:]}"
            if key == "$any" and isinstance(sub, list):
                for i, item in enumerate(sub):
                    problems += _check_pattern(item, f"{where}/{i}")
            elif not key.startswith("$") or key == "$contains":
                problems += _check_pattern(sub, where)
    elif isinstance(pattern, list):
        for i, item in enumerate(pattern):
            problems += _check_pattern(item, f"{pointer}/{i}")
    return problems


# -- conformance of what the mock sends ----------------------------------------------------------


def _check_conformance(script: Script) -> None:
    _check_log_opt_in(script)
    for step in script.steps:
        for revision in script.revisions:
            for pointer, message, request_method, mark, filled in _server_messages(step):
                if mark is not None:
                    continue
                if filled:  # as sent, but for the port (`_check_base_url` places them)
                    message = fill_base_url(message, BASE_URL_STAND_IN)
                if is_stateless(revision) and isinstance(message.get("result"), dict):
                    # Check what the engine will really send (see complete_stateless_result).
                    result = complete_stateless_result(request_method, message["result"])
                    meta = result.get("_meta", {})
                    if request_method == "subscriptions/listen" and isinstance(meta, dict):
                        # The transports name the subscription: the listen request's id.
                        result["_meta"] = {META_SUBSCRIPTION_ID: 0, **meta}
                    message = {**message, "result": result}
                # A message with `$request` templates is checked for what no request could
                # mend: the send gate would refuse it at the first answer.
                templated = filled and bool(template_pointers(message))
                if templated:
                    problem = templated_problem(message, revision, request_method=request_method)
                else:
                    found = validate(message, revision, "server", request_method=request_method)
                    problem = (found[0].pointer, found[0].reason) if found else None
                if problem is not None:
                    inner, reason = problem
                    whatever = " (whatever its $request values)" if templated else ""
                    raise ScriptError(
                        script.source,
                        pointer + _message_pointer(inner, pointer),
                        f"{step.label}: not a valid {revision} server message{whatever}: {reason}",
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
        marked = "violation" in send or "violation" in step.raw
        if send.get("method") == "notifications/message" and not marked:
            raise ScriptError(
                script.source,
                f"{step.pointer}/send",
                "at 2026-07-28 a log message goes only with a request that opted in "
                f"(_meta {_META_LOG_LEVEL}); no subscriptions/listen filter admits one",
                "send it in the reply's before of such a request, or mark the step with "
                '"violation": "<why>"',
            )
        if step.kind != "expect":
            continue
        reply = step.raw.get("reply", {})
        # Each message with its own mark (a `before` message's is inside it, an SSE item's on it).
        logs = [
            (f"{step.pointer}/reply/before/{i}", m, "violation" in m)
            for i, m in enumerate(reply.get("before", []))
        ] + [
            (
                f"{step.pointer}/reply/sse/events/{i}/message",
                item["message"],
                "violation" in item or "violation" in item["message"],
            )
            for i, item in enumerate(reply.get("sse", {}).get("events", []))
            if isinstance(item.get("message"), dict)
        ]
        for pointer, message, marked in logs:
            if message.get("method") != "notifications/message" or marked:
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
    'correct it, or mark that message with "violation": "<why>" if it breaks the spec on '
    "purpose (docs/scripts.md: a per-message mark)"
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


def _message_pointer(inner: str, outer: str) -> str:
    # Scripted replies hold only `result`/`error`: map the message pointer back to them.
    for member in ("/result", "/error"):
        if outer.endswith(member) and inner.startswith(member):
            return inner[len(member) :]
    return inner


def _server_messages(
    step: Step,
) -> list[tuple[str, dict[str, Any], str | None, str | None, bool]]:
    """(pointer, JSON-RPC message, method answered, mark, filled) for each message the step
    sends.

    The mark is the message's own `violation` (docs/scripts.md): `reply.violation` marks
    the response (or the raw body), a `before` or `send` message or an SSE item carries
    its own, and a send step's `violation` marks its one message. `filled`: the engine fills
    the message's `$request` templates from the request (a reply's result, error and
    `before` messages); a `send` message and an SSE item go out as written.
    """
    out: list[tuple[str, dict[str, Any], str | None, str | None, bool]] = []
    if step.kind == "send":
        message, mark = split_mark(step.raw["send"])
        mark = mark or step.raw.get("violation")
        out.append((f"{step.pointer}/send", {"jsonrpc": "2.0", **message}, None, mark, False))
        return out
    if step.kind != "expect":
        return out
    reply = step.raw.get("reply", {})
    reply_mark = reply.get("violation")
    method = step.raw["expect"].get("method")
    method = method if isinstance(method, str) and not method.startswith("notifications/") else None
    if method is not None:
        for member in ("result", "error"):
            if member in reply:
                response = {"jsonrpc": "2.0", "id": 1, member: reply[member]}
                out.append((f"{step.pointer}/reply/{member}", response, method, reply_mark, True))
    for i, raw in enumerate(reply.get("before", [])):
        message, mark = split_mark(raw)
        where = f"{step.pointer}/reply/before/{i}"
        out.append((where, {"jsonrpc": "2.0", **message}, None, mark, True))
    if isinstance(reply.get("body"), str):
        for carried in _carried(reply["body"]):
            out.append((f"{step.pointer}/reply/body", carried, method, reply_mark, False))
    for i, item in enumerate(reply.get("sse", {}).get("events", [])):
        where = f"{step.pointer}/reply/sse/events/{i}"
        if "message" in item:
            message, mark = split_mark(item["message"])
            mark = mark or item.get("violation")
            out.append((f"{where}/message", {"jsonrpc": "2.0", **message}, None, mark, False))
        if isinstance(item.get("raw"), str):
            for carried in _carried(item["raw"]):
                out.append((f"{where}/raw", carried, method, item.get("violation"), False))
    return out


def _carried(text: str) -> list[dict[str, Any]]:
    """The JSON-RPC objects a raw body or SSE raw item carries (the send gate's reading)."""
    value = jsonrpc_in_text(text)
    members = value if isinstance(value, list) else [value]
    return [m for m in members if isinstance(m, dict)]
