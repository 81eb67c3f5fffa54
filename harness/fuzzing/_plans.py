"""Generated server behaviour: a plan of what the harness asks and how the server answers.

A `Plan` is the operations the harness asks of a client (listing tools, resources and
prompts in pages; calling a tool, reading a resource, getting a prompt, asking for a
completion) with the answer the server gives to each: around it the notifications and the
server requests (ping, sampling, elicitation, roots) it sends, a delay before the answer,
and deliberate faults (a line that is not JSON, a long line, stderr noise; a dropped
connection or a crash as the last operation's answer). It is written as an ordinary script
(`to_script`), which the stdio mock replays, and read back from one (`plan_of_script`): a
saved failure is a script file and nothing else. Each step's label names its operation
(`op2 page1`, `op3 call`, `op3 send1`, `op3 fault2`), which is how the plan is read back.

`plans(revision)` is the Hypothesis strategy. Values are chosen for what a client can get
wrong when it decodes and surfaces them: integers beyond 2**53 (in results and as the ids of
server requests), floats that are whole numbers (5.0 is not 5), empty strings as cursors and
ids, every content type of the revision.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import re
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from hypothesis import strategies as st

from harness.clients import Handlers

__all__ = [
    "FATAL_FAULTS",
    "FUZZ_HANDLERS",
    "FUZZ_REVISIONS",
    "SURVIVABLE_FAULTS",
    "CallTool",
    "Complete",
    "GetPrompt",
    "ListPrompts",
    "ListResources",
    "ListTools",
    "Listing",
    "Operation",
    "Page",
    "Plan",
    "ReadResource",
    "is_fault",
    "plan_of_script",
    "plans",
    "smaller_plans",
]

#: The revisions plans are generated for (the others come in later slices).
FUZZ_REVISIONS: Final = ("2025-11-25",)

#: Faults after which the spec lets a client go on (the next operation should work).
SURVIVABLE_FAULTS: Final = ("garbage", "oversized_line", "stderr")
#: Faults that end the connection: only the last operation's answer is one.
FATAL_FAULTS: Final = ("drop_connection", "crash")

#: What the harness gives the client to answer server requests with: so a client declares
#: sampling, elicitation and roots (one that declares less is sent none of those requests:
#: the mock withholds them).
FUZZ_HANDLERS: Final = Handlers(
    sampling={
        "role": "assistant",
        "content": {"type": "text", "text": "fuzz"},
        "model": "fuzz-model",
        "stopReason": "endTurn",
    },
    elicitation={"action": "decline"},
    roots=({"uri": "file:///fuzz", "name": "fuzz"},),
)

_BIG: Final = 2**70
_TOOL_NAME_CHARS: Final = string.ascii_letters + string.digits + "_-."
_KEY_CHARS: Final = string.ascii_letters + string.digits + "_ "
_MAX_DELAY_MS: Final = 100
"""A delay is far within the client's time-out (seconds): waiting it out is the client's job."""

# Capabilities the scripted server declares: every notification a plan sends is one the
# server may send under them, and every request it answers one of a declared capability.
_CAPABILITIES: Final[dict[str, Any]] = {
    "tools": {},
    "logging": {},
    "resources": {"listChanged": True},
    "prompts": {"listChanged": True},
    "completions": {},
}

_FIRST_PAGE: Final[dict[str, Any]] = {"$any": [{"$absent": True}, {"cursor": {"$absent": True}}]}
_LABEL: Final = re.compile(r"^op(\d+) (page(\d+)|call|send(\d+)|fault(\d+))$")

Message = Mapping[str, Any]


@dataclass(frozen=True)
class Page:
    """One page of a listing: its items, and the cursor of the next page (None: the last)."""

    items: tuple[Mapping[str, Any], ...]
    next_cursor: str | None


@dataclass(frozen=True)
class Listing:
    """A listing operation: the pages the server answers, each asked with the previous
    cursor. `before`: server messages (notifications, requests) sent before the first page's
    answer; `after`: server messages and `{"fault": ...}` items once it is answered, in
    order; `delay_ms`: the wait before the first page's answer."""

    pages: tuple[Page, ...]
    before: tuple[Message, ...] = ()
    after: tuple[Message, ...] = ()
    delay_ms: int = 0

    METHOD: ClassVar[str] = "tools/list"
    KEY: ClassVar[str] = "tools"
    OP: ClassVar[str] = "list_tools"

    @property
    def expected(self) -> dict[str, Any]:
        return {self.KEY: [item for page in self.pages for item in page.items]}

    @property
    def asked(self) -> tuple[str, tuple[Any, ...]]:
        """The client method the harness calls, with its arguments."""
        return self.OP, ()

    @property
    def reply(self) -> Mapping[str, Any]:
        return {"result": self.expected}


class ListTools(Listing):
    """`list_tools`: `{"tools": [...]}`, every page followed."""


class ListResources(Listing):
    """`list_resources`: `{"resources": [...]}`, every page followed."""

    METHOD = "resources/list"
    KEY = "resources"
    OP = "list_resources"


class ListPrompts(Listing):
    """`list_prompts`: `{"prompts": [...]}`, every page followed."""

    METHOD = "prompts/list"
    KEY = "prompts"
    OP = "list_prompts"


class _Single:
    """An operation of one request; `reply` is `{"result": ...}`, `{"error": {...}}` or
    `{"fault": {...}}` (a fatal fault: the request is never answered)."""

    reply: Mapping[str, Any]

    @property
    def is_protocol_error(self) -> bool:
        return "error" in self.reply

    @property
    def is_fault(self) -> bool:
        return "fault" in self.reply

    @property
    def is_error_result(self) -> bool:
        result = self.reply.get("result")
        return isinstance(result, Mapping) and result.get("isError") is True


@dataclass(frozen=True)
class CallTool(_Single):
    """`call_tool(name, arguments)`."""

    name: str
    arguments: Mapping[str, Any]
    reply: Mapping[str, Any]
    before: tuple[Message, ...] = ()
    after: tuple[Message, ...] = ()
    delay_ms: int = 0

    METHOD: ClassVar[str] = "tools/call"

    @property
    def params(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}

    @property
    def asked(self) -> tuple[str, tuple[Any, ...]]:
        return "call_tool", (self.name, dict(self.arguments))


@dataclass(frozen=True)
class ReadResource(_Single):
    """`read_resource(uri)`: the ReadResourceResult (`contents`)."""

    uri: str
    reply: Mapping[str, Any]
    before: tuple[Message, ...] = ()
    after: tuple[Message, ...] = ()
    delay_ms: int = 0

    METHOD: ClassVar[str] = "resources/read"

    @property
    def params(self) -> dict[str, Any]:
        return {"uri": self.uri}

    @property
    def asked(self) -> tuple[str, tuple[Any, ...]]:
        return "read_resource", (self.uri,)


@dataclass(frozen=True)
class GetPrompt(_Single):
    """`get_prompt(name, arguments)`: the GetPromptResult (`messages`, `description`)."""

    name: str
    arguments: Mapping[str, str]
    reply: Mapping[str, Any]
    before: tuple[Message, ...] = ()
    after: tuple[Message, ...] = ()
    delay_ms: int = 0

    METHOD: ClassVar[str] = "prompts/get"

    @property
    def params(self) -> dict[str, Any]:
        return {"name": self.name, "arguments": self.arguments}

    @property
    def asked(self) -> tuple[str, tuple[Any, ...]]:
        return "get_prompt", (self.name, dict(self.arguments))


@dataclass(frozen=True)
class Complete(_Single):
    """`complete(ref, argument)` (driver protocol 1.1): the CompleteResult."""

    ref: Mapping[str, Any]
    argument: Mapping[str, Any]
    reply: Mapping[str, Any]
    before: tuple[Message, ...] = ()
    after: tuple[Message, ...] = ()
    delay_ms: int = 0

    METHOD: ClassVar[str] = "completion/complete"

    @property
    def params(self) -> dict[str, Any]:
        return {"ref": self.ref, "argument": self.argument}

    @property
    def asked(self) -> tuple[str, tuple[Any, ...]]:
        return "complete", (dict(self.ref), dict(self.argument))


Single = CallTool | ReadResource | GetPrompt | Complete
Operation = Listing | CallTool | ReadResource | GetPrompt | Complete
"""Any operation of a plan (a `Listing` is `ListTools`, `ListResources` or `ListPrompts`)."""
_LISTINGS: Final = {kind.METHOD: kind for kind in (ListTools, ListResources, ListPrompts)}


def is_fault(item: Message) -> bool:
    """Whether an `after` item is a deliberate fault (else a server message)."""
    return "fault" in item


@dataclass(frozen=True)
class Plan:
    revision: str
    operations: tuple[Operation, ...]

    def to_script(self, name: str = "fuzz") -> dict[str, Any]:
        """The plan as an ordinary script (docs/scripts.md), for stdio at its revision."""
        steps: list[dict[str, Any]] = []
        for index, operation in enumerate(self.operations, start=1):
            if isinstance(operation, Listing):
                cursor: str | None = None
                for number, page in enumerate(operation.pages, start=1):
                    params: Any = _FIRST_PAGE if cursor is None else {"cursor": cursor}
                    reply: dict[str, Any] = {"result": _page_result(operation.KEY, page)}
                    if number == 1:
                        _around(reply, operation)
                    steps.append(
                        {
                            "label": f"op{index} page{number}",
                            "expect": {"method": operation.METHOD, "params": params},
                            "reply": reply,
                        }
                    )
                    cursor = page.next_cursor
            else:
                reply = dict(operation.reply)
                _around(reply, operation)
                steps.append(
                    {
                        "label": f"op{index} call",
                        "expect": {"method": operation.METHOD, "params": operation.params},
                        "reply": reply,
                    }
                )
            for number, item in enumerate(operation.after, start=1):
                if is_fault(item):
                    steps.append(
                        {"label": f"op{index} fault{number}", "fault": dict(item["fault"])}
                    )
                else:
                    steps.append({"label": f"op{index} send{number}", "send": dict(item)})
        return {
            "format_version": 1,
            "name": name,
            "description": (
                f"Generated by mcp-testbench fuzz: {len(self.operations)} operations "
                "(read back from the step labels)."
            ),
            "revisions": [self.revision],
            "transports": ["stdio"],
            "server": {"capabilities": _CAPABILITIES, "info": {"name": "fuzz", "version": "1"}},
            "steps": steps,
        }

    def to_json_text(self) -> str:
        return json.dumps(self.to_script(), indent=1, ensure_ascii=False)


def _around(reply: dict[str, Any], operation: Operation) -> None:
    if operation.before:
        reply["before"] = [dict(m) for m in operation.before]
    if operation.delay_ms:
        reply["delay_ms"] = operation.delay_ms


def _page_result(key: str, page: Page) -> dict[str, Any]:
    result: dict[str, Any] = {key: [dict(item) for item in page.items]}
    if page.next_cursor is not None:
        result["nextCursor"] = page.next_cursor
    return result


def plan_of_script(script: Mapping[str, Any]) -> Plan:
    """The plan a script written by `Plan.to_script` holds (ValueError: not such a script)."""
    revisions = script.get("revisions") or []
    if len(revisions) != 1:
        raise ValueError("a fuzz script names exactly one revision")
    firsts: dict[int, Mapping[str, Any]] = {}  # the step of each operation's first reply
    pages: dict[int, list[Page]] = {}
    afters: dict[int, list[tuple[int, Message]]] = {}
    for step in script.get("steps", []):
        found = _LABEL.match(str(step.get("label", "")))
        if found is None:
            raise ValueError(f"step {step.get('label')!r} is not labelled as a fuzz step")
        index = int(found.group(1))
        if found.group(4) is not None:
            afters.setdefault(index, []).append((int(found.group(4)), step["send"]))
        elif found.group(5) is not None:
            afters.setdefault(index, []).append((int(found.group(5)), {"fault": step["fault"]}))
        else:
            firsts.setdefault(index, step)
            if found.group(3) is not None:
                key = _LISTINGS[step["expect"]["method"]].KEY
                result = step["reply"]["result"]
                pages.setdefault(index, []).append(
                    Page(tuple(result[key]), result.get("nextCursor"))
                )
    operations: list[Operation] = []
    for index in sorted(firsts):
        step = firsts[index]
        extras: dict[str, Any] = {
            "before": tuple(step["reply"].get("before", ())),
            "after": tuple(item for _, item in sorted(afters.get(index, []), key=_first)),
            "delay_ms": int(step["reply"].get("delay_ms", 0)),
        }
        method = step["expect"]["method"]
        if index in pages:
            operations.append(_LISTINGS[method](tuple(pages[index]), **extras))
            continue
        reply = {k: v for k, v in step["reply"].items() if k not in ("before", "delay_ms")}
        params = step["expect"]["params"]
        if method == CallTool.METHOD:
            operations.append(CallTool(params["name"], params["arguments"], reply, **extras))
        elif method == ReadResource.METHOD:
            operations.append(ReadResource(params["uri"], reply, **extras))
        elif method == GetPrompt.METHOD:
            operations.append(GetPrompt(params["name"], params["arguments"], reply, **extras))
        elif method == Complete.METHOD:
            operations.append(Complete(params["ref"], params["argument"], reply, **extras))
        else:
            raise ValueError(f"step {step.get('label')!r}: no fuzz operation asks {method}")
    return Plan(str(revisions[0]), tuple(operations))


def _first(item: tuple[int, Message]) -> int:
    return item[0]


# --- strategies ------------------------------------------------------------------------------

_SPECIAL_INTEGERS: Final = (0, -1, 2**53, 2**53 + 1, -(2**53) - 1, 2**63, 2**64 + 1)


def _integers() -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(_SPECIAL_INTEGERS), st.integers(-_BIG, _BIG))


def _numbers() -> st.SearchStrategy[float]:
    # Whole floats (5.0) are the ones a client that re-types numbers turns into integers.
    return st.one_of(
        st.sampled_from([0.0, -0.0, 5.0, 1e300, 2.0**53 + 2]),
        st.floats(allow_nan=False, allow_infinity=False),
    )


def _keys() -> st.SearchStrategy[str]:
    # No key starts with "$": the script format reads `{"$request": ...}` as a template.
    return st.text(_KEY_CHARS, min_size=1, max_size=8)


_SCALAR_OF_TYPE: Final[dict[str, st.SearchStrategy[Any]]] = {
    "null": st.none(),
    "boolean": st.booleans(),
    "integer": _integers(),
    "number": _numbers(),
    "string": st.text(max_size=12),
}


def _values(max_leaves: int = 6) -> st.SearchStrategy[Any]:
    """Any JSON value, typed: integers, whole floats and numeric strings differ."""
    return st.recursive(
        st.one_of(*_SCALAR_OF_TYPE.values()),
        lambda children: st.one_of(
            st.lists(children, max_size=3), st.dictionaries(_keys(), children, max_size=3)
        ),
        max_leaves=max_leaves,
    )


_SHAPE_TYPES: Final = ("integer", "number", "string", "boolean", "null", "array", "object")


@st.composite
def _tool(draw: st.DrawFn, name: str) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "inputSchema": {"type": "object"}}
    if draw(st.booleans()):
        tool["description"] = draw(st.text(max_size=20))
    if draw(st.booleans()):
        shape = draw(st.dictionaries(_keys(), st.sampled_from(_SHAPE_TYPES), max_size=3))
        tool["outputSchema"] = {
            "type": "object",
            "properties": {key: {"type": kind} for key, kind in shape.items()},
            "required": sorted(shape),
        }
    if draw(st.booleans()):
        tool["_meta"] = {"example.com/fuzz": draw(_values(4))}
    return tool


def _names() -> st.SearchStrategy[list[str]]:
    return st.lists(
        st.text(_TOOL_NAME_CHARS, min_size=1, max_size=10), min_size=1, max_size=3, unique=True
    )


@st.composite
def _catalogue(draw: st.DrawFn) -> tuple[dict[str, Any], ...]:
    return tuple(draw(_tool(name)) for name in draw(_names()))


_URIS: Final = ("file:///a.txt", "https://example.com/x", "urn:fuzz:1", "file:///dir/b%20c.bin")


@st.composite
def _resources(draw: st.DrawFn) -> tuple[dict[str, Any], ...]:
    uris = draw(st.lists(st.sampled_from(_URIS), min_size=1, max_size=3, unique=True))
    found = []
    for uri in uris:
        resource: dict[str, Any] = {"uri": uri, "name": draw(st.text(min_size=1, max_size=8))}
        if draw(st.booleans()):
            resource["mimeType"] = draw(st.sampled_from(["text/plain", "image/png"]))
        if draw(st.booleans()):
            resource["size"] = draw(st.sampled_from([0, 1, 2**53 + 1]))
        if draw(st.booleans()):
            resource["_meta"] = {"example.com/fuzz": draw(_values(3))}
        found.append(resource)
    return tuple(found)


@st.composite
def _prompts(draw: st.DrawFn) -> tuple[dict[str, Any], ...]:
    found = []
    for name in draw(_names()):
        prompt: dict[str, Any] = {"name": name}
        if draw(st.booleans()):
            prompt["description"] = draw(st.text(max_size=12))
        if draw(st.booleans()):
            prompt["arguments"] = [
                {"name": arg, "required": draw(st.booleans())}
                for arg in draw(
                    st.lists(st.text(string.ascii_lowercase, min_size=1, max_size=4), max_size=2)
                )
            ]
        found.append(prompt)
    return tuple(found)


def _cursors() -> st.SearchStrategy[str]:
    # The empty string is a cursor like any other (it is not "no next page").
    return st.one_of(st.just(""), st.sampled_from(["0", "null", " "]), st.text(max_size=8))


_REQUEST_IDS: Final[tuple[int | str, ...]] = (0, 1, -1, 2**53 + 1, 2**63, "1", "", "0", "é")


def _request_ids() -> st.SearchStrategy[int | str]:
    return st.one_of(st.sampled_from(_REQUEST_IDS), st.integers(-_BIG, _BIG), st.text(max_size=6))


def _server_requests() -> st.SearchStrategy[dict[str, Any]]:
    """A request the server sends (its id is stamped by `_plan`, unique in the plan)."""
    text = st.text(max_size=10)
    sampling = st.builds(
        lambda words, tokens: {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": words}}],
                "maxTokens": tokens,
            },
        },
        text,
        st.sampled_from([1, 100, 2**31 - 1]),
    )
    elicitation = st.builds(
        lambda words: {
            "method": "elicitation/create",
            "params": {
                "message": words,
                "requestedSchema": {"type": "object", "properties": {"n": {"type": "string"}}},
            },
        },
        text,
    )
    return st.one_of(
        st.just({"method": "ping"}), st.just({"method": "roots/list"}), sampling, elicitation
    )


def _notifications() -> st.SearchStrategy[dict[str, Any]]:
    log = st.builds(
        lambda level, data: {
            "method": "notifications/message",
            "params": {"level": level, "data": data},
        },
        st.sampled_from(["debug", "info", "warning", "error"]),
        _values(4),
    )
    changed = st.sampled_from(
        [
            {"method": "notifications/resources/list_changed"},
            {"method": "notifications/prompts/list_changed"},
        ]
    )
    return st.one_of(log, changed)


def _survivable_faults() -> st.SearchStrategy[dict[str, Any]]:
    garbage = st.builds(
        lambda text: {"fault": {"kind": "garbage", "text": text}},
        st.sampled_from(["not JSON", "{", '{"jsonrpc": "2.0"', "[1,", "]", "Content-Length: 9"]),
    )
    long_line = st.builds(
        lambda size: {"fault": {"kind": "oversized_line", "bytes": size, "terminated": True}},
        st.sampled_from([70_000, 150_000]),
    )
    noise = st.builds(
        lambda lines: {"fault": {"kind": "stderr", "text": "WARNING: noise", "lines": lines}},
        st.sampled_from([1, 200]),
    )
    return st.one_of(garbage, long_line, noise)


def _messages() -> st.SearchStrategy[tuple[dict[str, Any], ...]]:
    """Server messages around an answer: notifications and requests."""
    return st.lists(st.one_of(_notifications(), _server_requests()), max_size=2).map(tuple)


def _after() -> st.SearchStrategy[tuple[dict[str, Any], ...]]:
    """Once an operation is answered: server messages, and now and then a fault."""
    item = st.one_of(_notifications(), _server_requests(), _survivable_faults())
    return st.lists(item, max_size=2).map(tuple)


def _delays() -> st.SearchStrategy[int]:
    return st.one_of(st.just(0), st.just(0), st.just(0), st.integers(1, _MAX_DELAY_MS))


@st.composite
def _pages(draw: st.DrawFn, items: Sequence[Mapping[str, Any]]) -> tuple[Page, ...]:
    """The items split into 1 to 3 pages (a page may be empty), with distinct cursors."""
    count = draw(st.integers(1, 3))
    cuts = sorted(
        draw(st.lists(st.integers(0, len(items)), min_size=count - 1, max_size=count - 1))
    )
    bounds = [0, *cuts, len(items)]
    cursors = draw(st.lists(_cursors(), min_size=count - 1, max_size=count - 1, unique=True))
    return tuple(
        Page(tuple(items[bounds[i] : bounds[i + 1]]), cursors[i] if i < count - 1 else None)
        for i in range(count)
    )


@st.composite
def _listing(draw: st.DrawFn, kind: type[Listing], items: Sequence[Mapping[str, Any]]) -> Listing:
    return kind(draw(_pages(items)), draw(_messages()), draw(_after()), draw(_delays()))


def _text_block() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda text: {"type": "text", "text": text}, st.text(max_size=16))


def _data() -> st.SearchStrategy[str]:
    return st.binary(max_size=12).map(lambda raw: base64.b64encode(raw).decode("ascii"))


def _content_blocks() -> st.SearchStrategy[dict[str, Any]]:
    uris = st.sampled_from(_URIS[:3])
    image = st.builds(
        lambda data, mime: {"type": "image", "data": data, "mimeType": mime},
        _data(),
        st.sampled_from(["image/png", "image/jpeg"]),
    )
    audio = st.builds(
        lambda data: {"type": "audio", "data": data, "mimeType": "audio/wav"}, _data()
    )
    link = st.builds(
        lambda uri, name: {"type": "resource_link", "uri": uri, "name": name},
        uris,
        st.text(min_size=1, max_size=8),
    )
    text_resource = st.builds(
        lambda uri, text: {"type": "resource", "resource": {"uri": uri, "text": text}},
        uris,
        st.text(max_size=12),
    )
    blob_resource = st.builds(
        lambda uri, blob: {
            "type": "resource",
            "resource": {"uri": uri, "blob": blob, "mimeType": "application/octet-stream"},
        },
        uris,
        _data(),
    )
    block = st.one_of(_text_block(), image, audio, link, text_resource, blob_resource)

    @st.composite
    def annotated(draw: st.DrawFn) -> dict[str, Any]:
        chosen = dict(draw(block))
        if draw(st.booleans()):
            chosen["annotations"] = {
                "audience": draw(
                    st.lists(st.sampled_from(["user", "assistant"]), max_size=2, unique=True)
                ),
                "priority": draw(st.sampled_from([0, 1, 0.5, 1.0, 0.0])),
            }
        return chosen

    return annotated()


def _structured(schema: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """A value of an outputSchema `_tool` wrote: one member of each named type."""
    members: dict[str, st.SearchStrategy[Any]] = {}
    for key, member in schema["properties"].items():
        kind = member["type"]
        if kind == "array":
            members[key] = st.lists(_values(3), max_size=3)
        elif kind == "object":
            members[key] = st.dictionaries(_keys(), _values(3), max_size=3)
        else:
            members[key] = _SCALAR_OF_TYPE[kind]
    return st.fixed_dictionaries(members)


def _protocol_errors(codes: Sequence[int]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def error(draw: st.DrawFn) -> dict[str, Any]:
        found: dict[str, Any] = {
            "code": draw(st.sampled_from(list(codes))),
            "message": draw(st.text(max_size=16)),
        }
        if draw(st.booleans()):
            found["data"] = draw(_values(4))
        return {"error": found}

    return error()


_ERROR_CODES: Final = (-32602, -32603, -32000, -32001, -1, 1, 42)


@st.composite
def _call_tool(draw: st.DrawFn, catalogue: Sequence[Mapping[str, Any]]) -> CallTool:
    tool = draw(st.sampled_from(list(catalogue)))
    arguments = draw(
        st.dictionaries(
            st.text(string.ascii_lowercase, min_size=1, max_size=4),
            st.one_of(st.integers(-100, 100), st.text(string.ascii_letters, max_size=6)),
            max_size=2,
        )
    )
    kind = draw(st.sampled_from(["result", "tool-error", "protocol-error"]))
    reply: dict[str, Any]
    if kind == "protocol-error":
        reply = draw(_protocol_errors(_ERROR_CODES))
    else:
        result: dict[str, Any] = {"content": draw(st.lists(_content_blocks(), max_size=3))}
        schema = tool.get("outputSchema")
        if kind == "tool-error":
            result["isError"] = True
        elif schema is not None:
            result["structuredContent"] = draw(_structured(schema))
        elif draw(st.booleans()):
            result["structuredContent"] = draw(
                st.dictionaries(_keys(), _values(4), min_size=1, max_size=3)
            )
        if kind == "result" and draw(st.booleans()):
            result["isError"] = False
        reply = {"result": result}
    return CallTool(
        str(tool["name"]),
        arguments,
        reply,
        draw(_messages()),
        draw(_after()),
        draw(_delays()),
    )


@st.composite
def _read_resource(draw: st.DrawFn, resources: Sequence[Mapping[str, Any]]) -> ReadResource:
    uri = str(draw(st.sampled_from(list(resources)))["uri"])
    reply: dict[str, Any]
    if draw(st.integers(0, 3)) == 0:
        reply = draw(_protocol_errors((-32002, -32602, -32603, 42)))
    else:
        text = st.builds(
            lambda body, mime: {"uri": uri, "text": body, **({"mimeType": mime} if mime else {})},
            st.text(max_size=12),
            st.sampled_from([None, "text/plain"]),
        )
        blob = st.builds(
            lambda data: {"uri": uri, "blob": data, "mimeType": "application/octet-stream"},
            _data(),
        )
        reply = {"result": {"contents": draw(st.lists(st.one_of(text, blob), max_size=3))}}
    return ReadResource(uri, reply, draw(_messages()), draw(_after()), draw(_delays()))


@st.composite
def _get_prompt(draw: st.DrawFn, prompts: Sequence[Mapping[str, Any]]) -> GetPrompt:
    prompt = draw(st.sampled_from(list(prompts)))
    arguments = {str(arg["name"]): draw(st.text(max_size=6)) for arg in prompt.get("arguments", [])}
    reply: dict[str, Any]
    if draw(st.integers(0, 3)) == 0:
        reply = draw(_protocol_errors((-32602, -32603, 42)))
    else:
        message = st.builds(
            lambda role, block: {"role": role, "content": block},
            st.sampled_from(["user", "assistant"]),
            _content_blocks(),
        )
        result: dict[str, Any] = {"messages": draw(st.lists(message, max_size=3))}
        if draw(st.booleans()):
            result["description"] = draw(st.text(max_size=10))
        reply = {"result": result}
    name = str(prompt["name"])
    return GetPrompt(name, arguments, reply, draw(_messages()), draw(_after()), draw(_delays()))


@st.composite
def _complete(
    draw: st.DrawFn, prompts: Sequence[Mapping[str, Any]], resources: Sequence[Mapping[str, Any]]
) -> Complete:
    if draw(st.booleans()):
        ref: dict[str, Any] = {"type": "ref/prompt", "name": draw(st.sampled_from(prompts))["name"]}
    else:
        ref = {"type": "ref/resource", "uri": "file:///{path}"}
    argument = {"name": "path", "value": draw(st.text(max_size=4))}
    reply: dict[str, Any]
    if draw(st.integers(0, 3)) == 0:
        reply = draw(_protocol_errors((-32602, -32603, 42)))
    else:
        completion: dict[str, Any] = {"values": draw(st.lists(st.text(max_size=6), max_size=4))}
        if draw(st.booleans()):
            completion["total"] = draw(st.sampled_from([0, 4, 100, 2**53 + 1]))
        if draw(st.booleans()):
            completion["hasMore"] = draw(st.booleans())
        reply = {"result": {"completion": completion}}
    return Complete(ref, argument, reply, draw(_messages()), draw(_after()), draw(_delays()))


def _fatal(operation: Single, kind: str) -> Single:
    fault: dict[str, Any] = {"kind": kind}
    if kind == "crash":
        fault["exit_code"] = 3
    return dataclasses.replace(operation, reply={"fault": fault}, after=())


def _stamped(operations: Sequence[Operation], ids: Iterator[int | str]) -> tuple[Operation, ...]:
    """The operations with a fresh id (from `ids`) on each server request."""

    def stamp(messages: tuple[Message, ...]) -> tuple[Message, ...]:
        return tuple(
            {"id": next(ids), **m} if "method" in m and m["method"] in _REQUEST_METHODS else m
            for m in messages
        )

    return tuple(
        dataclasses.replace(op, before=stamp(op.before), after=stamp(op.after)) for op in operations
    )


_REQUEST_METHODS: Final = frozenset(
    {"ping", "roots/list", "sampling/createMessage", "elicitation/create"}
)


@st.composite
def _plan(draw: st.DrawFn, revision: str) -> Plan:
    catalogue = draw(_catalogue())
    resources = draw(_resources())
    prompts = draw(_prompts())
    first = draw(_listing(ListTools, catalogue))  # a call's outputSchema is known from a listing
    rest: list[Operation] = draw(
        st.lists(
            st.one_of(
                # Tool calls three times as often as any other kind: their answers vary most.
                _call_tool(catalogue),
                _call_tool(catalogue),
                _call_tool(catalogue),
                _listing(ListTools, catalogue),
                _listing(ListResources, resources),
                _read_resource(resources),
                _listing(ListPrompts, prompts),
                _get_prompt(prompts),
                _complete(prompts, resources),
            ),
            min_size=1,
            max_size=5,
        )
    )
    last = rest[-1] if rest else None
    if last is not None and not isinstance(last, Listing) and draw(st.integers(0, 7)) == 0:
        rest[-1] = _fatal(last, draw(st.sampled_from(FATAL_FAULTS)))
    operations = (first, *rest)
    count = sum(
        1
        for op in operations
        for m in (*op.before, *op.after)
        if m.get("method") in _REQUEST_METHODS
    )
    ids = draw(
        st.lists(
            _request_ids(),
            min_size=count,
            max_size=count,
            unique_by=lambda value: (type(value).__name__, value),
        )
    )
    return Plan(revision, _stamped(operations, iter(ids)))


def plans(revision: str = "2025-11-25") -> st.SearchStrategy[Plan]:
    """Plans for a client at `revision` over stdio: the handshake (built into the
    mock), a listing of the tools in pages, then calls, readings, prompts, completions and
    listings, with server messages, delays and faults around them."""
    if revision not in FUZZ_REVISIONS:
        raise ValueError(
            f"plans are generated for {', '.join(FUZZ_REVISIONS)} so far, not {revision}"
        )
    return _plan(revision)


# --- reduction -------------------------------------------------------------------------------

_OPTIONAL_ITEM_MEMBERS: Final = ("description", "_meta", "outputSchema", "mimeType", "size")


def smaller_plans(plan: Plan) -> list[Plan]:
    """Plans one structural edit smaller than `plan`, the biggest cuts first: every
    notification, request and fault around the operations gone, one operation gone (the
    last first), one message or fault around an operation gone, its delay gone, one content
    block gone, one item of a page gone, one optional member of an item gone. Each is a
    valid plan; what a client's run of it shows is for the caller to find out."""
    ops = plan.operations
    found: list[Plan] = []
    if any(op.before or op.after for op in ops):
        quiet = tuple(dataclasses.replace(op, before=(), after=()) for op in ops)
        found.append(dataclasses.replace(plan, operations=quiet))
    if len(ops) > 1:
        found.extend(
            dataclasses.replace(plan, operations=ops[:i] + ops[i + 1 :])
            for i in reversed(range(len(ops)))
        )
    for i, op in enumerate(ops):
        for smaller in _smaller_operation(op):
            found.append(dataclasses.replace(plan, operations=(*ops[:i], smaller, *ops[i + 1 :])))
    return found


def _smaller_operation(op: Operation) -> list[Operation]:
    found: list[Operation] = [
        dataclasses.replace(op, before=op.before[:j] + op.before[j + 1 :])
        for j in range(len(op.before))
    ]
    found.extend(
        dataclasses.replace(op, after=op.after[:j] + op.after[j + 1 :])
        for j in range(len(op.after))
    )
    if op.delay_ms:
        found.append(dataclasses.replace(op, delay_ms=0))
    if isinstance(op, Listing):
        found.extend(_smaller_listing(op))
        return found
    result = op.reply.get("result")
    if not isinstance(result, Mapping):
        return found
    for member in ("content", "contents", "messages"):
        blocks = list(result.get(member, []))
        found.extend(
            dataclasses.replace(
                op, reply={"result": {**result, member: blocks[:j] + blocks[j + 1 :]}}
            )
            for j in range(len(blocks))
        )
    return found


def _smaller_listing(op: Listing) -> list[Operation]:
    found: list[Operation] = []
    for p, page in enumerate(op.pages):
        for t, item in enumerate(page.items):
            fewer = Page(page.items[:t] + page.items[t + 1 :], page.next_cursor)
            found.append(dataclasses.replace(op, pages=(*op.pages[:p], fewer, *op.pages[p + 1 :])))
            for member in _OPTIONAL_ITEM_MEMBERS:
                if member in item:
                    bare = {k: v for k, v in item.items() if k != member}
                    barer = Page((*page.items[:t], bare, *page.items[t + 1 :]), page.next_cursor)
                    pages = (*op.pages[:p], barer, *op.pages[p + 1 :])
                    found.append(dataclasses.replace(op, pages=pages))
    return found
