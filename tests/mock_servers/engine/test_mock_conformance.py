"""Every message a mock sends is valid at send time (the send gate, mock_servers/_conformance).

1. Every shipped fixture, at every revision and over every transport it allows, goes
   through the engine with synthetic client messages built from its expect patterns (plus
   the handshake or `server/discover`, ping, an unknown method and the 2026-07-28
   refusals). Every message the mock would send is validated against the OFFICIAL MCP
   schema of the revision (test data, ../shared/mcp-schemas) and against the project's
   own (what the gate checks): no unmarked message may be invalid.
2. The gate at work on both transports: an invalid filled template, `before` message,
   initialize result, SSE raw item or raw body is not sent, is recorded as `mock_error`
   and ends the run; the same message marked as a violation goes out.
3. The harness reads a mock error as its own fault: every check is BLOCKED by "harness".
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import itertools
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from _machine import within
from _spec_data import spec_data
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from jsonschema import Draft7Validator, Draft202012Validator
from jsonschema.protocols import Validator
from referencing import Registry
from referencing.jsonschema import DRAFT7, DRAFT202012

from harness.clients import ReferenceClient
from harness.judging._catalogue import CATALOGUE
from harness.judging._judge import judge
from harness.judging._preconditions import root_causes
from harness.protocol import (
    HANDSHAKE_REVISIONS,
    Request,
    is_stateless,
    parse,
    schema_document,
    transports_for,
)
from harness.running._scenario import execute
from harness.suite import scenario
from mock_servers import fixtures_root
from mock_servers.engine._engine import META_CAPABILITIES, META_PROTOCOL_VERSION, Delivery, Engine
from mock_servers.engine._patterns import match
from mock_servers.engine._script import Script, ScriptError, Step, load_script, parse_script
from mock_servers.engine._send_gate import MOCK_ERROR_EXIT, SendGate, jsonrpc_in_text, split_mark
from mock_servers.engine._transcript import Transcript
from mock_servers.http import create_app, mock_of
from mock_servers.http._asgi_transport import StreamingASGITransport
from mock_servers.stdio import serve_stdio

DRAFT7_REVISIONS = ("2024-11-05", "2025-03-26", "2025-06-18")
WAIT = within(10.0)
FIXTURES = sorted(
    p.relative_to(fixtures_root()).as_posix() for p in fixtures_root().rglob("*.json")
)
# Everything a client may declare, so that no server request is out of place for it.
CLIENT_CAPABILITIES: dict[str, Any] = {
    "roots": {"listChanged": True},
    "sampling": {},
    "elicitation": {},
}


# -- the official schemas (test data) --------------------------------------------------------------


@functools.cache
def official(revision: str) -> dict[str, Any]:
    path = spec_data(f"mcp-schemas/{revision}/schema.json")
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def _defs(revision: str) -> dict[str, Any]:
    key = "definitions" if revision in DRAFT7_REVISIONS else "$defs"
    defs: dict[str, Any] = official(revision)[key]
    return defs


@functools.cache
def _validator(revision: str, name: str) -> Validator:
    draft7 = revision in DRAFT7_REVISIONS
    spec, cls = (DRAFT7, Draft7Validator) if draft7 else (DRAFT202012, Draft202012Validator)
    registry: Registry[Any] = Registry().with_resource(
        f"urn:official:{revision}", spec.create_resource(official(revision))
    )
    key = "definitions" if draft7 else "$defs"
    validator: Validator = cls(
        {"$ref": f"urn:official:{revision}#/{key}/{name}"}, registry=registry
    )
    return validator


def _errors(revision: str, name: str, instance: Any) -> list[str]:
    if name not in _defs(revision):
        return [f"the official schema has no {name} at {revision}"]
    return [
        f"{name}: {e.json_path}: {e.message}"
        for e in _validator(revision, name).iter_errors(instance)
    ]


_SPECIFIC_ERRORS = {
    -32042: "URLElicitationRequiredError",
    -32020: "HeaderMismatchError",
    -32021: "MissingRequiredClientCapabilityError",
    -32022: "UnsupportedProtocolVersionError",
}


def _result_type(revision: str, method: str | None, result: Any) -> str:
    """The official definition of the result that answers `method` (the union if unknown)."""
    requests = schema_document(revision)["x-mcp"]["client"]["requests"]
    entry = requests.get(method) if method is not None else None
    if entry is None:
        return "ServerResult"
    name: str = entry["result"]
    if isinstance(result, dict):
        if entry.get("inputRequired") and result.get("resultType") == "input_required":
            name = "InputRequiredResult"
        elif entry.get("taskAugmentable") and "task" in result:
            name = "CreateTaskResult"
    return name if name in _defs(revision) else "ServerResult"


def official_problems(message: Any, revision: str, request_method: str | None) -> list[str]:
    """What the official schema of `revision` finds wrong with a server message."""
    errors = _errors(revision, "JSONRPCMessage", message)
    if errors:
        return errors
    defs = _defs(revision)
    if "method" in message:
        kind = "Request" if "id" in message else "Notification"
        return _errors(revision, f"JSONRPC{kind}", message) + _errors(
            revision, f"Server{kind}", message
        )
    if "result" in message:
        envelope = "JSONRPCResultResponse" if "JSONRPCResultResponse" in defs else "JSONRPCResponse"
        name = _result_type(revision, request_method, message["result"])
        return _errors(revision, envelope, message) + _errors(revision, name, message["result"])
    envelope = "JSONRPCErrorResponse" if "JSONRPCErrorResponse" in defs else "JSONRPCError"
    out = _errors(revision, envelope, message)
    code = message["error"].get("code") if isinstance(message.get("error"), dict) else None
    if isinstance(code, int) and _SPECIFIC_ERRORS.get(code) in defs:
        out += _errors(revision, _SPECIFIC_ERRORS[code], message)
    return out


# -- synthetic client messages from the expect patterns ---------------------------------------------

_OMIT: Any = object()
_SAMPLES = {
    "string": "x",
    "integer": 1,
    "number": 1,
    "boolean": True,
    "object": {},
    "array": [],
    "null": None,
}


def synthesize(pattern: Any, choice: Iterator[int] | None = None) -> Any:
    """A value that `pattern` matches (_OMIT for a member that must be absent).

    `choice` picks the alternative of each `$any` in turn (default: the first of each)."""
    if isinstance(pattern, dict) and pattern and all(k.startswith("$") for k in pattern):
        if "$absent" in pattern:
            return _OMIT if pattern["$absent"] else "x"
        if "$any" in pattern:
            options = pattern["$any"]
            pick = next(choice, 0) if choice is not None else 0
            return synthesize(options[min(pick, len(options) - 1)], choice)
        if "$contains" in pattern:
            return [synthesize(pattern["$contains"])]
        if "$type" in pattern:
            return copy.deepcopy(_SAMPLES[pattern["$type"]])
        if "$present" in pattern:
            return "x" if pattern["$present"] else _OMIT
        raise AssertionError(f"no synthesis for the pattern {pattern}")  # $regex: none shipped
    if isinstance(pattern, dict):
        built = {k: synthesize(v, choice) for k, v in pattern.items()}
        return {k: v for k, v in built.items() if v is not _OMIT}
    if isinstance(pattern, list):
        return [synthesize(v, choice) for v in pattern]
    return pattern


def synthesize_for(pattern: Any, revision: str) -> Any:
    """A value `pattern` matches once `_with_meta` has added what `revision` requires.

    At 2026-07-28 the `_meta` a request must carry can rule out the first `$any`
    alternative (e.g. `{"$absent": true}` on `_meta`): try the others, a few at a time."""
    first = synthesize(pattern)
    if not is_stateless(revision):
        return first
    required = {
        "params": {
            "_meta": {META_PROTOCOL_VERSION: revision, META_CAPABILITIES: CLIENT_CAPABILITIES}
        }
    }
    fallback = None
    for picks in itertools.product(range(4), repeat=3):
        candidate = synthesize(pattern, iter(picks))
        if "method" not in candidate:
            return candidate
        # Prefer a request the engine accepts: the real version where the pattern names one.
        for value in (_merge(candidate, required), candidate):
            if not match(pattern, _with_meta({"jsonrpc": "2.0", "id": 1, **value}, revision)):
                if value is not candidate:
                    return value
                fallback = fallback or value
    return fallback or first


def _merge(base: Any, extra: Any) -> Any:
    if isinstance(base, dict) and isinstance(extra, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in extra.items()}}
    return copy.deepcopy(extra)


_INITIALIZE_PARAMS = {
    "capabilities": CLIENT_CAPABILITIES,
    "clientInfo": {"name": "synthetic", "version": "1"},
}


# -- driving the engine, collecting what it would send ------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Sent:
    message: dict[str, Any]
    request_method: str | None
    mark: str | None
    where: str


def _delivery_messages(
    delivery: Delivery, request_method: str | None, transport: str
) -> Iterator[Sent]:
    """What a transport writes for one delivery (before a fault that swallows the response)."""
    where = delivery.origin
    marks = delivery.before_marks or [None] * len(delivery.before)
    for index, (message, mark) in enumerate(zip(delivery.before, marks, strict=True)):
        yield Sent(message, None, mark, f"{where}: before {index}")
    if transport != "stdio":
        for index, item in enumerate(delivery.sse.get("events", [])):
            if "message" in item:
                message, mark = split_mark(item["message"])
                yield Sent(
                    {"jsonrpc": "2.0", **message},
                    None,
                    mark or item.get("violation"),
                    f"{where}: SSE {index}",
                )
            elif isinstance(item.get("raw"), str):
                for carried in _carried(item["raw"]):
                    yield Sent(carried, None, item.get("violation"), f"{where}: SSE raw {index}")
        if delivery.body is not None:
            for carried in _carried(delivery.body):
                yield Sent(carried, request_method, delivery.violation, f"{where}: body")
    kind = (delivery.fault or {}).get("kind")
    swallowed = kind in ("hang", "drop_connection", "crash", "garbage", "expire_session")
    if delivery.response is not None and not swallowed:
        response = delivery.response.to_json()
        yield Sent(response, request_method, delivery.violation, f"{where}: response")


def _carried(text: str) -> list[dict[str, Any]]:
    value = jsonrpc_in_text(text)
    members = value if isinstance(value, list) else [value]
    return [m for m in members if isinstance(m, dict)]


def _client_messages(script: Script, revision: str) -> Iterator[dict[str, Any]]:
    ids = itertools.count(1000)
    expects = [s for s in script.steps if s.kind == "expect"]
    scripted_init = next(
        (s for s in expects if s.raw["expect"].get("method") == "initialize"), None
    )
    if revision in HANDSHAKE_REVISIONS:
        if scripted_init is None:
            params = {"protocolVersion": revision, **_INITIALIZE_PARAMS}
            yield {"jsonrpc": "2.0", "id": next(ids), "method": "initialize", "params": params}
            yield {"jsonrpc": "2.0", "method": "notifications/initialized"}
        yield {"jsonrpc": "2.0", "id": next(ids), "method": "ping"}
    else:
        yield {"jsonrpc": "2.0", "id": next(ids), "method": "server/discover", "params": {}}
    for step in expects:
        message = synthesize_for(step.raw["expect"], revision)
        method = message.get("method")
        if method == "initialize":
            message["params"] = _merge(
                {"protocolVersion": revision, **_INITIALIZE_PARAMS}, message.get("params", {})
            )
        if (
            isinstance(method, str)
            and "id" not in message
            and not method.startswith("notifications/")
        ):
            message["id"] = next(ids)
        if method is None and not {"result", "error"} & set(message):
            message["result"] = {}  # an answer to a server request, its content left open
        yield {"jsonrpc": "2.0", **message}
        if method == "initialize":
            yield {"jsonrpc": "2.0", "method": "notifications/initialized"}
    # The engine's own errors: an unknown method, and (2026-07-28) the _meta refusals.
    yield {"jsonrpc": "2.0", "id": next(ids), "method": "mcp-testbench/no-such-method"}
    if is_stateless(revision):
        yield {"jsonrpc": "2.0", "id": next(ids), "method": "tools/list", "params": {}}
        meta = {META_PROTOCOL_VERSION: "1999-01-01", META_CAPABILITIES: {}}
        yield {"jsonrpc": "2.0", "id": next(ids), "method": "tools/list", "params": {"_meta": meta}}


def _with_meta(message: dict[str, Any], revision: str) -> dict[str, Any]:
    """2026-07-28: a request carries its version and capabilities in `_meta`."""
    if not is_stateless(revision) or "id" not in message or "method" not in message:
        return message
    params = dict(message.get("params") or {})
    meta = params.get("_meta")
    if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
        return message  # a refusal case, or a pattern that sets it
    params["_meta"] = {
        META_PROTOCOL_VERSION: revision,
        META_CAPABILITIES: CLIENT_CAPABILITIES,
        **(meta if isinstance(meta, dict) else {}),
    }
    return {**message, "params": params}


def sent_by_the_mock(script: Script, revision: str, transport: str) -> list[Sent]:
    """Every message the engine gives `transport` to send, client messages synthesized."""
    engine = Engine(script, revision, transport, Transcript(script=script.name))
    out: list[Sent] = []

    def actions(found: list[Any]) -> None:
        for action in found:
            if action.kind == "send":
                out.append(Sent(action.payload, None, action.violation, action.step.label))

    actions(engine.start())
    last_refusal_cases = 2 if is_stateless(revision) else 0
    messages = list(_client_messages(script, revision))
    for index, raw in enumerate(messages):
        if index < len(messages) - last_refusal_cases:
            raw = _with_meta(raw, revision)
        message = parse(json.dumps(raw))
        assert not isinstance(message, list)
        outcome = engine.handle(message)  # type: ignore[arg-type]
        if outcome.delivery is not None:
            method = message.method if isinstance(message, Request) else None
            out += _delivery_messages(outcome.delivery, method, transport)
        actions(outcome.actions)
    return out


def _matrix() -> Iterator[tuple[str, str, str]]:
    for path in FIXTURES:
        script = load_script(fixtures_root() / path)
        for revision in script.revisions:
            for transport in script.transports:
                if transport in transports_for(revision):
                    yield path, revision, transport


MATRIX = list(_matrix())


@pytest.mark.parametrize(("path", "revision", "transport"), MATRIX)
def test_every_unmarked_message_of_every_fixture_is_valid(
    path: str, revision: str, transport: str
) -> None:
    official(revision)  # skips, with the reason, when the schemas are absent
    script = load_script(fixtures_root() / path)
    sent = sent_by_the_mock(script, revision, transport)
    assert sent, "the drive made the mock send nothing"
    gate = SendGate(revision, Transcript(script=script.name))
    invalid = []
    for item in sent:
        if item.mark is not None:
            continue
        found = official_problems(item.message, revision, item.request_method)
        ours = gate.problem(item.message, request_method=item.request_method)
        if found or ours:
            invalid.append(f"{item.where}: {json.dumps(item.message)[:200]}: {found[:2]} {ours}")
    assert not invalid, "\n".join(invalid)


def test_the_drive_reaches_every_expect_step_of_every_fixture() -> None:
    """The synthetic messages match their steps: the corpus above covers every reply."""
    missed = []
    for path in FIXTURES:
        script = load_script(fixtures_root() / path)
        revision = script.revisions[-1]
        transcript = Transcript(script=script.name)
        engine = Engine(script, revision, script.transports[0], transcript)
        engine.start()
        for raw in _client_messages(script, revision):
            message = parse(json.dumps(_with_meta(raw, revision)))
            engine.handle(message)  # type: ignore[arg-type]
        consumed = {e["step"] for e in transcript.of_kind("step")}
        missed += [
            f"{path}: {s.label}"
            for s in script.steps
            if s.kind == "expect" and s.index not in consumed
        ]
    assert not missed, missed


def test_the_matrix_covers_every_fixture_revision_and_transport() -> None:
    assert {path for path, _, _ in MATRIX} == set(FIXTURES)
    assert {transport for _, _, transport in MATRIX} == {"stdio", "http", "sse-legacy"}
    assert len({revision for _, revision, _ in MATRIX}) == 5


def test_synthesis_honours_the_operators() -> None:
    pattern = {
        "method": "tools/call",
        "params": {
            "name": "work",
            "_meta": {"$any": [{"$absent": True}, {"progressToken": {"$absent": True}}]},
            "arguments": {"n": {"$type": "integer"}, "tags": {"$contains": "a"}},
        },
    }
    assert synthesize(pattern) == {
        "method": "tools/call",
        "params": {"name": "work", "arguments": {"n": 1, "tags": ["a"]}},
    }


# -- the gate on its own ---------------------------------------------------------------------------


def test_the_gate_refuses_an_invalid_message_and_records_why() -> None:
    transcript = Transcript(script="gate")
    gate = SendGate("2025-11-25", transcript)
    bad = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": 3}]}}
    assert not gate.admit(bad, where="step 1 (add)", request_method="tools/call")
    [entry] = transcript.of_kind("mock_error")
    assert entry["where"] == "step 1 (add)"
    assert entry["revision"] == "2025-11-25"
    assert entry["pointer"].startswith("/result/content/0")
    assert entry["message"] == bad
    assert "step 1 (add)" in gate.describe()
    assert "violation" in gate.describe()
    assert gate.admit(bad, where="marked", request_method="tools/call", violation="on purpose")
    assert len(gate.errors) == 1


def test_the_gate_checks_results_by_the_method_they_answer() -> None:
    gate = SendGate("2025-06-18", Transcript(script="gate"))
    empty = {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert gate.problem(empty, request_method="ping") is None
    assert gate.problem(empty, request_method="tools/list") is not None  # no "tools"
    # An unknown method has no result type: the result union admits any object.
    assert gate.problem(empty, request_method="vendor/thing") is None
    # JSON-RPC's answer to input whose id could not be read has id null.
    unreadable = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert gate.problem(unreadable) is None


def test_the_gate_remembers_verdicts_only_for_the_same_message_up_to_its_id() -> None:
    # A repeated answer is checked once (the check costs milliseconds); a verdict never
    # carries over to another message, revision, method, or id type.
    gate = SendGate("2025-11-25", Transcript(script="gate"))
    bad = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": 3}]}}
    good = {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "3"}]}}
    for ident in (1, 2, 3):
        assert gate.problem({**bad, "id": ident}, request_method="tools/call") is not None
        assert gate.problem({**good, "id": ident}, request_method="tools/call") is None
    assert gate.problem({**good, "id": "a"}, request_method="tools/call") is None
    assert gate.problem({**good, "id": 1.5}, request_method="tools/call") is not None
    assert gate.problem({**good, "id": True}, request_method="tools/call") is not None
    assert gate.problem(good, request_method="tools/list") is not None  # no "tools"
    older = SendGate("2024-11-05", Transcript(script="gate"))
    audio = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"content": [{"type": "audio", "data": "", "mimeType": "audio/wav"}]},
    }
    assert gate.problem(audio, request_method="tools/call") is None
    assert older.problem(audio, request_method="tools/call") is not None  # no audio in 2024


def test_raw_text_is_read_as_json_rpc_only_when_it_is() -> None:
    assert jsonrpc_in_text('{"jsonrpc":"2.0","id":1,"result":{}}') == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {},
    }
    assert jsonrpc_in_text('event: message\ndata: {"jsonrpc":"2.0","method":"x"}\n\n') == {
        "jsonrpc": "2.0",
        "method": "x",
    }
    assert jsonrpc_in_text("{not json") is None
    assert jsonrpc_in_text('{"hello": 1}') is None
    assert jsonrpc_in_text(": a comment\n\n") is None


@pytest.mark.parametrize(
    "revision", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
)
def test_every_built_in_answer_is_valid(revision: str) -> None:
    script = parse_script(
        {
            "format_version": 1,
            "name": "built-ins",
            "revisions": [revision],
            "server": {
                "capabilities": {"tools": {"listChanged": True}, "logging": {}},
                "info": {"name": "built-ins", "version": "1.0"},
                "instructions": "Use the tools.",
            },
            "steps": [{"expect": {"method": "tools/list"}, "reply": {}}],
        }
    )
    sent = sent_by_the_mock(script, revision, "stdio")
    methods = {s.request_method for s in sent}
    if is_stateless(revision):
        assert {"server/discover", "tools/list", "mcp-testbench/no-such-method"} <= methods
    else:
        assert {"initialize", "ping", "tools/list", "mcp-testbench/no-such-method"} <= methods
    gate = SendGate(revision, Transcript(script="built-ins"))
    for item in sent:
        assert gate.problem(item.message, request_method=item.request_method) is None, item
        assert official_problems(item.message, revision, item.request_method) == [], item


# -- the gate on the transports ---------------------------------------------------------------------

_ADD = {"name": "add", "inputSchema": {"type": "object"}}
# A template whose filled-in value breaks the schema: text must be a string, `a` is 1.
_BAD_TEXT = {"content": [{"type": "text", "text": {"$request": "/params/arguments/a"}}]}


def _script(steps: list[dict[str, Any]], revision: str = "2025-11-25") -> Script:
    return parse_script(
        {
            "format_version": 1,
            "name": "gate",
            "revisions": [revision],
            "server": {"capabilities": {"tools": {}}},
            "steps": steps,
        }
    )


def _add_call(request_id: int = 5) -> dict[str, Any]:
    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


class _MemoryIn(ByteReceiveStream):
    def __init__(self, rx: MemoryObjectReceiveStream[bytes]) -> None:
        self._rx = rx

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self._rx.receive()

    async def aclose(self) -> None:
        self._rx.close()


class _MemoryOut(ByteSendStream):
    def __init__(self, tx: MemoryObjectSendStream[bytes]) -> None:
        self._tx = tx

    async def send(self, item: bytes) -> None:
        await self._tx.send(item)

    async def aclose(self) -> None:
        self._tx.close()


def _stdio_exchange(
    script: Script, lines: list[dict[str, Any]]
) -> tuple[int, list[Any], Transcript]:
    """Serve `script` over in-memory stdio, send `lines`, close stdin: (exit code, output)."""
    transcript = Transcript(script=script.name, revision=script.revisions[0], transport="stdio")
    codes: list[int] = []
    output = bytearray()

    async def main() -> None:
        in_tx, in_rx = anyio.create_memory_object_stream[bytes](64)
        out_tx, out_rx = anyio.create_memory_object_stream[bytes](64)
        err_tx, err_rx = anyio.create_memory_object_stream[bytes](64)

        async def serve() -> None:
            codes.append(
                await serve_stdio(
                    script,
                    transcript=transcript,
                    stdin=_MemoryIn(in_rx),
                    stdout=_MemoryOut(out_tx),
                    stderr=_MemoryOut(err_tx),
                    answer_timeout=0.5,
                )
            )
            out_tx.close()
            err_tx.close()

        async def drain_stderr() -> None:
            async for _ in err_rx:
                pass

        with anyio.fail_after(WAIT):
            async with in_tx, out_rx, err_rx, anyio.create_task_group() as tg:
                tg.start_soon(serve)
                tg.start_soon(drain_stderr)
                for line in lines:
                    await in_tx.send(json.dumps(line).encode() + b"\n")
                in_tx.close()
                async for chunk in out_rx:
                    output.extend(chunk)
        for stream in (in_rx, out_tx, err_tx):
            stream.close()

    anyio.run(main)
    written = [json.loads(line) for line in bytes(output).splitlines() if line.strip()]
    return codes[0], written, transcript


def _initialize(version: str = "2025-11-25") -> dict[str, Any]:
    params = {"protocolVersion": version, **_INITIALIZE_PARAMS}
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


_INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def test_stdio_an_invalid_filled_template_is_not_sent_and_ends_the_run() -> None:
    script = _script([{"expect": {"method": "tools/call"}, "reply": {"result": _BAD_TEXT}}])
    code, written, transcript = _stdio_exchange(script, [_initialize(), _INITIALIZED, _add_call()])
    assert code == MOCK_ERROR_EXIT
    assert [m.get("id") for m in written] == [0]  # the initialize answer, nothing for the call
    [error] = transcript.of_kind("mock_error")
    assert error["pointer"] == "/result/content/0/text"
    assert error["where"].startswith("step 0 (expect tools/call)")
    assert error["message"]["result"]["content"][0]["text"] == 1
    assert [e["reason"] for e in transcript.of_kind("exit")] == ["mock_error"]


def test_stdio_a_marked_filled_template_goes_out() -> None:
    reply = {"result": _BAD_TEXT, "violation": "text of the wrong type, on purpose"}
    script = _script([{"expect": {"method": "tools/call"}, "reply": reply}])
    code, written, transcript = _stdio_exchange(script, [_initialize(), _INITIALIZED, _add_call()])
    assert code == 0
    assert written[-1] == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {"content": [{"type": "text", "text": 1}]},
    }
    assert not list(transcript.of_kind("mock_error"))


def test_stdio_a_before_message_is_checked_on_its_own_mark() -> None:
    progress = {
        "method": "notifications/progress",
        "params": {"progress": 1, "progressToken": {"$request": "/params/_meta/progressToken"}},
    }
    # The response's mark does not cover the before message: the null token is refused.
    reply = {"before": [progress], "result": {"content": []}, "violation": "the response only"}
    script = _script([{"expect": {"method": "tools/call"}, "reply": reply}])
    code, written, transcript = _stdio_exchange(script, [_initialize(), _INITIALIZED, _add_call()])
    assert code == MOCK_ERROR_EXIT
    [error] = transcript.of_kind("mock_error")
    assert "before message 0" in error["where"]
    assert error["pointer"] == "/params/progressToken"
    # Marked on the message itself, it goes out.
    marked = {**progress, "violation": "a progress notification for no token"}
    script = _script(
        [
            {
                "expect": {"method": "tools/call"},
                "reply": {"before": [marked], "result": {"content": []}},
            }
        ]
    )
    code, written, transcript = _stdio_exchange(script, [_initialize(), _INITIALIZED, _add_call()])
    assert code == 0
    assert written[-2] == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progress": 1, "progressToken": None},
    }


def test_stdio_an_invalid_initialize_result_from_the_server_block_is_refused() -> None:
    data = {
        "format_version": 1,
        "name": "bad-server-block",
        "revisions": ["2025-11-25"],
        "server": {"capabilities": {"tools": {"listChanged": "yes"}}},
        "steps": [],
    }
    code, written, transcript = _stdio_exchange(parse_script(data), [_initialize()])
    assert code == MOCK_ERROR_EXIT
    assert written == []
    [error] = transcript.of_kind("mock_error")
    assert error["pointer"] == "/result/capabilities/tools/listChanged"
    assert error["where"].startswith("a built-in answer")


def _unchecked(steps: list[dict[str, Any]]) -> Script:
    """A script with `steps` that skipped the load-time check (the gate's last line)."""
    kinds = [next(k for k in ("expect", "send", "fault") if k in raw) for raw in steps]
    return dataclasses.replace(
        _script([]),
        steps=tuple(
            Step(i, kind, raw) for i, (kind, raw) in enumerate(zip(kinds, steps, strict=False))
        ),  # type: ignore[arg-type]
    )


def test_the_load_time_check_reads_the_mark_of_each_message() -> None:
    level = {"method": "notifications/message", "params": {"level": "loud", "data": 1}}
    with pytest.raises(ScriptError, match="/steps/0/send/params/level"):
        _script([{"send": level}])
    _script([{"send": {**level, "violation": "an unknown level"}}])
    _script([{"send": level, "violation": "an unknown level"}])
    call = {"method": "tools/call"}
    # The response's mark covers the response only, not a before message or an SSE item.
    with pytest.raises(ScriptError, match="/steps/0/reply/before/0/params/level"):
        _script([{"expect": call, "reply": {"before": [level], "result": {}, "violation": "x"}}])
    _script(
        [
            {
                "expect": call,
                "reply": {"before": [{**level, "violation": "x"}], "result": {"content": []}},
            }
        ]
    )
    events = [{"message": level}]
    with pytest.raises(ScriptError, match="/steps/0/reply/sse/events/0/message"):
        _script(
            [{"expect": call, "reply": {"sse": {"events": events}, "result": {}, "violation": "x"}}]
        )
    for item in ({"message": level, "violation": "x"}, {"message": {**level, "violation": "x"}}):
        _script([{"expect": call, "reply": {"sse": {"events": [item]}, "result": {"content": []}}}])


def test_stdio_a_send_step_is_checked_and_its_mark_is_the_message() -> None:
    bad_send = {"send": {"method": "notifications/message", "params": {"level": "loud", "data": 1}}}
    code, _, transcript = _stdio_exchange(_unchecked([bad_send]), [_initialize()])
    assert code == MOCK_ERROR_EXIT
    assert [e["where"] for e in transcript.of_kind("mock_error")] == [
        "step 0 (send notifications/message)"
    ]
    for marked in (
        {**bad_send, "violation": "an unknown level"},
        {"send": {**bad_send["send"], "violation": "an unknown level"}},
    ):
        code, written, _ = _stdio_exchange(_unchecked([marked]), [_initialize()])
        assert code == 0
        assert {"jsonrpc": "2.0", **bad_send["send"]} in written  # the mark is taken off


@asynccontextmanager
async def _in_process(script: Script) -> AsyncIterator[tuple[httpx.AsyncClient, Any]]:
    app = create_app(script, revision=script.revisions[0])
    transport = StreamingASGITransport(app)
    async with httpx.AsyncClient(
        transport=transport, base_url="http://127.0.0.1", timeout=WAIT
    ) as client:
        yield client, mock_of(app)


_ACCEPT = {"accept": "application/json, text/event-stream"}


async def _http_session(client: httpx.AsyncClient) -> dict[str, str]:
    answer = await client.post("/mcp", json=_initialize(), headers=_ACCEPT)
    assert answer.status_code == 200
    headers = {
        **_ACCEPT,
        "mcp-session-id": answer.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-11-25",
    }
    await client.post("/mcp", json=_INITIALIZED, headers=headers)
    return headers


def _http(script: Script, check: Any) -> None:
    async def main() -> None:
        with anyio.fail_after(WAIT):
            async with _in_process(script) as (client, mock):
                headers = await _http_session(client)
                await check(client, headers, mock)

    anyio.run(main)


def test_http_an_invalid_filled_template_is_a_500_and_the_run_is_over() -> None:
    script = _script([{"expect": {"method": "tools/call"}, "reply": {"result": _BAD_TEXT}}])

    async def check(client: httpx.AsyncClient, headers: dict[str, str], mock: Any) -> None:
        answer = await client.post("/mcp", json=_add_call(), headers=headers)
        assert answer.status_code == 500
        assert "mock error" in answer.text
        assert "/result/content/0/text" in answer.text
        [error] = mock.transcript.of_kind("mock_error")
        assert error["where"].startswith("request 3: step 0 (expect tools/call)")
        sent = [
            e["message"] for e in mock.transcript.of_kind("message") if e["direction"] == "server"
        ]
        assert all(m.get("id") != 5 for m in sent)
        ping = {"jsonrpc": "2.0", "id": 6, "method": "ping"}
        assert (await client.post("/mcp", json=ping, headers=headers)).status_code == 500

    _http(script, check)


def test_http_a_marked_filled_template_goes_out() -> None:
    reply = {"result": _BAD_TEXT, "violation": "on purpose"}
    script = _script([{"expect": {"method": "tools/call"}, "reply": reply}])

    async def check(client: httpx.AsyncClient, headers: dict[str, str], mock: Any) -> None:
        answer = await client.post("/mcp", json=_add_call(), headers=headers)
        assert answer.status_code == 200
        assert answer.json()["result"]["content"][0]["text"] == 1

    _http(script, check)


async def _read_stream(
    client: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str]
) -> None:
    async with client.stream("POST", "/mcp", json=body, headers=headers) as stream:
        async for _ in stream.aiter_bytes():
            pass


def test_http_sse_items_and_raw_bodies_are_checked_unless_marked() -> None:
    bad = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"loud","data":1}}'
    steps = [
        {
            "expect": {"method": "tools/call", "params": {"name": "raw-event"}},
            "reply": {"result": {"content": []}, "sse": {"events": [{"raw": f"data: {bad}\n\n"}]}},
        },
        {
            "expect": {"method": "tools/call", "params": {"name": "marked"}},
            "reply": {
                "result": {"content": []},
                "sse": {"events": [{"raw": f"data: {bad}\n\n", "violation": "an unknown level"}]},
            },
        },
    ]
    with pytest.raises(ScriptError, match="/steps/0/reply/sse/events/0/raw/params/level"):
        _script(steps)  # caught at load time already; the gate is the last line
    script = _unchecked(steps)

    async def check(client: httpx.AsyncClient, headers: dict[str, str], mock: Any) -> None:
        call = {**_add_call(7), "params": {"name": "marked"}}
        answer = await client.post("/mcp", json=call, headers=headers)
        assert answer.status_code == 200
        assert '"loud"' in answer.text
        call = {**_add_call(8), "params": {"name": "raw-event"}}
        with pytest.raises(httpx.HTTPError):  # the stream is dropped, not completed
            await _read_stream(client, call, headers)
        [error] = mock.transcript.of_kind("mock_error")
        assert "SSE item 0" in error["where"]
        assert error["pointer"] == "/params/level"

    _http(script, check)


def test_http_a_raw_body_carrying_an_invalid_response_is_refused() -> None:
    body = '{"jsonrpc":"2.0","id":5,"result":{"tools":"none"}}'
    steps = [{"expect": {"method": "tools/list"}, "reply": {"body": body}}]
    with pytest.raises(ScriptError, match="/steps/0/reply/body/result/tools"):
        _script(steps)  # caught at load time already
    script = _script(
        [{"expect": {"method": "tools/list"}, "reply": {"body": body, "violation": "x"}}]
    )

    async def check(client: httpx.AsyncClient, headers: dict[str, str], mock: Any) -> None:
        listing = {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}
        answer = await client.post("/mcp", json=listing, headers=headers)
        assert answer.status_code == 200
        assert answer.json()["result"] == {"tools": "none"}

    _http(script, check)


def test_progress_fixture_sends_no_progress_without_a_token() -> None:
    script = load_script(fixtures_root() / "features" / "progress.json")
    without = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "work"}}
    with_token = {**without, "id": 6, "params": {"name": "work", "_meta": {"progressToken": "t"}}}
    script_2025 = dataclasses.replace(script, revisions=("2025-11-25",))
    _, written, transcript = _stdio_exchange(
        script_2025, [_initialize(), _INITIALIZED, without, with_token]
    )
    progress = [m for m in written if m.get("method") == "notifications/progress"]
    assert [m["params"]["progressToken"] for m in progress] == ["t", "t"]
    assert {m.get("id") for m in written} >= {5, 6}
    assert not list(transcript.of_kind("mock_error"))


# -- the harness reads a mock error as its own fault -------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_mock_error_blocks_every_check_as_the_harness_fault(
    tmp_path: Path, transport: str
) -> None:
    data = json.loads((fixtures_root() / "tools" / "list-and-call.json").read_text())
    add = next(s for s in data["steps"] if s.get("label") == "add")
    add["reply"] = {"result": _BAD_TEXT}
    path = tmp_path / "bad-template.json"
    path.write_text(json.dumps(data))
    tools_call = dataclasses.replace(scenario("tools-call"), script=str(path))
    run = execute(tools_call, "2025-11-25", transport, ReferenceClient, op_timeout=5.0)
    assert list(e for e in run.entries if e["kind"] == "mock_error")
    [cause] = root_causes(run)
    assert cause.id == "harness"
    assert "mock error" in cause.reason
    assert "/result/content/0/text" in cause.reason
    for check_id in tools_call.checks:
        check = CATALOGUE[check_id]
        if check.applies("2025-11-25", transport):
            verdict = judge(check, run)
            assert (verdict.status.value, verdict.root) == ("BLOCKED", "harness"), check_id


def test_the_official_check_finds_what_the_gate_refuses() -> None:
    """The corpus test is not vacuous: the official check rejects what it must."""
    no_token = {
        "method": "notifications/progress",
        "params": {"progressToken": None, "progress": 1},
    }
    wrong_text = {"id": 1, "result": {"content": [{"type": "text", "text": 1}]}}
    for revision in ("2025-03-26", "2025-11-25", "2026-07-28"):
        gate = SendGate(revision, Transcript(script="gate"))
        for message, method in ((no_token, None), (wrong_text, "tools/call")):
            message = {"jsonrpc": "2.0", **message}
            assert official_problems(message, revision, method), (revision, message)
            assert gate.problem(message, request_method=method) is not None, (revision, message)
    untyped = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}  # no resultType
    assert official_problems(untyped, "2026-07-28", "tools/list")


def _marks(path: str, revision: str) -> dict[str, str | None]:
    script = load_script(fixtures_root() / path)
    return {s.where: s.mark for s in sent_by_the_mock(script, revision, "stdio")}


def test_marks_sit_on_the_messages_they_are_meant_for() -> None:
    robustness = _marks("tools/robustness.json", "2025-11-25")
    decoy = "step 2 (add, after a decoy response): before 0"
    assert robustness[decoy] is not None
    assert "decoy" in str(robustness[decoy])
    assert robustness["step 2 (add, after a decoy response): response"] is None
    modes = _marks("features/elicitation-modes.json", "2025-11-25")
    assert "URL-mode" in str(modes["step 2 (ask-url): before 0"])
    assert "never started" in str(modes["step 2 (ask-url): before 1"])
    assert modes["step 2 (ask-url): response"] is None  # the tool result is checked
    assert modes["step 1 (ask): before 0"] is None  # the form-mode request is checked


def test_the_documented_mark_example_is_a_valid_step() -> None:
    text = (Path(__file__).resolve().parents[3] / "docs" / "scripts.md").read_text()
    section = text.split("## Conformance", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0] for b in section.split("```json step\n")[1:]]
    assert blocks, "the Conformance section shows a marked message"
    for block in blocks:
        script = _script([json.loads(block)])
        sent = sent_by_the_mock(script, "2025-11-25", "stdio")
        assert [s.mark is not None for s in sent if s.where.startswith("step 0")] == [True, False]
