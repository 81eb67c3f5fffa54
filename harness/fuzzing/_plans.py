"""Generated server behaviour: a plan of what the harness asks and how the server answers.

A `Plan` is the operations the harness asks of a client (`ListTools`, `CallTool`) with the
answers the server gives to each, and the notifications it sends around them. It is written
as an ordinary script (`to_script`), which the stdio mock replays, and read back from one
(`plan_of_script`): a saved failure is a script file and nothing else. Each step's label
names its operation (`op2 page1`, `op3 call`, `op3 send1`), which is how the plan is read
back.

`plans(revision)` is the Hypothesis strategy. Values are chosen for what a client can get
wrong when it decodes and surfaces them: integers beyond 2**53, floats that are whole
numbers (5.0 is not 5), empty strings as cursors, every content type of the revision.
"""

from __future__ import annotations

import base64
import json
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hypothesis import strategies as st

__all__ = [
    "FUZZ_REVISIONS",
    "CallTool",
    "ListTools",
    "Operation",
    "Page",
    "Plan",
    "plan_of_script",
    "plans",
    "smaller_plans",
]

#: The revisions plans are generated for (the others come in later slices).
FUZZ_REVISIONS: Final = ("2025-11-25",)

_BIG: Final = 2**70
_TOOL_NAME_CHARS: Final = string.ascii_letters + string.digits + "_-."
_KEY_CHARS: Final = string.ascii_letters + string.digits + "_ "

# Capabilities the scripted server declares: every notification a plan sends is one the
# server may send under them.
_CAPABILITIES: Final[dict[str, Any]] = {
    "tools": {},
    "logging": {},
    "resources": {"listChanged": True},
    "prompts": {"listChanged": True},
}

_FIRST_PAGE: Final[dict[str, Any]] = {"$any": [{"$absent": True}, {"cursor": {"$absent": True}}]}
_LABEL: Final = re.compile(r"^op(\d+) (page(\d+)|call|send(\d+))$")


@dataclass(frozen=True)
class Page:
    """One tools/list page: its tools, and the cursor of the next page (None: the last)."""

    tools: tuple[Mapping[str, Any], ...]
    next_cursor: str | None


@dataclass(frozen=True)
class ListTools:
    """`list_tools`: the pages the server answers, each asked with the previous cursor."""

    pages: tuple[Page, ...]
    before: tuple[Mapping[str, Any], ...] = ()
    """Notifications the server sends before answering the first page."""
    after: tuple[Mapping[str, Any], ...] = ()
    """Notifications the server sends once the operation is answered (send steps)."""

    @property
    def expected(self) -> dict[str, Any]:
        return {"tools": [tool for page in self.pages for tool in page.tools]}


@dataclass(frozen=True)
class CallTool:
    """`call_tool(name, arguments)`: the server answers `reply` (a result or an error)."""

    name: str
    arguments: Mapping[str, Any]
    reply: Mapping[str, Any]
    """`{"result": CallToolResult}` or `{"error": {"code", "message", "data"?}}`."""
    before: tuple[Mapping[str, Any], ...] = ()
    after: tuple[Mapping[str, Any], ...] = ()

    @property
    def is_error_result(self) -> bool:
        return "result" in self.reply and self.reply["result"].get("isError") is True

    @property
    def is_protocol_error(self) -> bool:
        return "error" in self.reply


Operation = ListTools | CallTool


@dataclass(frozen=True)
class Plan:
    revision: str
    operations: tuple[Operation, ...]

    def to_script(self, name: str = "fuzz") -> dict[str, Any]:
        """The plan as an ordinary script (docs/scripts.md), for stdio at its revision."""
        steps: list[dict[str, Any]] = []
        for index, operation in enumerate(self.operations, start=1):
            if isinstance(operation, ListTools):
                cursor: str | None = None
                for number, page in enumerate(operation.pages, start=1):
                    params: Any = _FIRST_PAGE if cursor is None else {"cursor": cursor}
                    reply: dict[str, Any] = {"result": _page_result(page)}
                    if number == 1 and operation.before:
                        reply["before"] = [dict(m) for m in operation.before]
                    steps.append(
                        {
                            "label": f"op{index} page{number}",
                            "expect": {"method": "tools/list", "params": params},
                            "reply": reply,
                        }
                    )
                    cursor = page.next_cursor
            else:
                reply = dict(operation.reply)
                if operation.before:
                    reply["before"] = [dict(m) for m in operation.before]
                steps.append(
                    {
                        "label": f"op{index} call",
                        "expect": {
                            "method": "tools/call",
                            "params": {"name": operation.name, "arguments": operation.arguments},
                        },
                        "reply": reply,
                    }
                )
            for number, message in enumerate(operation.after, start=1):
                steps.append({"label": f"op{index} send{number}", "send": dict(message)})
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


def _page_result(page: Page) -> dict[str, Any]:
    result: dict[str, Any] = {"tools": [dict(tool) for tool in page.tools]}
    if page.next_cursor is not None:
        result["nextCursor"] = page.next_cursor
    return result


def plan_of_script(script: Mapping[str, Any]) -> Plan:
    """The plan a script written by `Plan.to_script` holds (ValueError: not such a script)."""
    revisions = script.get("revisions") or []
    if len(revisions) != 1:
        raise ValueError("a fuzz script names exactly one revision")
    pages: dict[int, list[Page]] = {}
    befores: dict[int, tuple[Mapping[str, Any], ...]] = {}
    afters: dict[int, list[Mapping[str, Any]]] = {}
    calls: dict[int, CallTool] = {}
    for step in script.get("steps", []):
        found = _LABEL.match(str(step.get("label", "")))
        if found is None:
            raise ValueError(f"step {step.get('label')!r} is not labelled as a fuzz step")
        index = int(found.group(1))
        if found.group(2) == "call":
            reply = {k: v for k, v in step["reply"].items() if k != "before"}
            params = step["expect"]["params"]
            calls[index] = CallTool(params["name"], params["arguments"], reply)
            befores[index] = tuple(step["reply"].get("before", ()))
        elif found.group(3) is not None:
            result = step["reply"]["result"]
            pages.setdefault(index, []).append(
                Page(tuple(result["tools"]), result.get("nextCursor"))
            )
            if found.group(3) == "1":
                befores[index] = tuple(step["reply"].get("before", ()))
        else:
            afters.setdefault(index, []).append(step["send"])
    operations: list[Operation] = []
    for index in sorted({*pages, *calls}):
        before, after = befores.get(index, ()), tuple(afters.get(index, ()))
        if index in calls:
            call = calls[index]
            operations.append(CallTool(call.name, call.arguments, call.reply, before, after))
        else:
            operations.append(ListTools(tuple(pages[index]), before, after))
    return Plan(str(revisions[0]), tuple(operations))


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


@st.composite
def _catalogue(draw: st.DrawFn) -> tuple[dict[str, Any], ...]:
    names = draw(
        st.lists(
            st.text(_TOOL_NAME_CHARS, min_size=1, max_size=10), min_size=1, max_size=3, unique=True
        )
    )
    return tuple(draw(_tool(name)) for name in names)


def _cursors() -> st.SearchStrategy[str]:
    # The empty string is a cursor like any other (it is not "no next page").
    return st.one_of(st.just(""), st.sampled_from(["0", "null", " "]), st.text(max_size=8))


def _notifications() -> st.SearchStrategy[tuple[dict[str, Any], ...]]:
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
    return st.lists(st.one_of(log, changed), max_size=2).map(tuple)


@st.composite
def _list_tools(draw: st.DrawFn, catalogue: Sequence[Mapping[str, Any]]) -> ListTools:
    """The catalogue split into 1 to 3 pages (a page may be empty), with distinct cursors."""
    count = draw(st.integers(1, 3))
    cuts = sorted(
        draw(st.lists(st.integers(0, len(catalogue)), min_size=count - 1, max_size=count - 1))
    )
    bounds = [0, *cuts, len(catalogue)]
    cursors = draw(st.lists(_cursors(), min_size=count - 1, max_size=count - 1, unique=True))
    pages = tuple(
        Page(tuple(catalogue[bounds[i] : bounds[i + 1]]), cursors[i] if i < count - 1 else None)
        for i in range(count)
    )
    return ListTools(pages, draw(_notifications()), draw(_notifications()))


def _text_block() -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(lambda text: {"type": "text", "text": text}, st.text(max_size=16))


def _data() -> st.SearchStrategy[str]:
    return st.binary(max_size=12).map(lambda raw: base64.b64encode(raw).decode("ascii"))


def _content_blocks() -> st.SearchStrategy[dict[str, Any]]:
    uris = st.sampled_from(["file:///a.txt", "https://example.com/x", "urn:fuzz:1"])
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
        error: dict[str, Any] = {
            "code": draw(st.sampled_from([-32602, -32603, -32000, -32001, -1, 1, 42])),
            "message": draw(st.text(max_size=16)),
        }
        if draw(st.booleans()):
            error["data"] = draw(_values(4))
        reply = {"error": error}
    else:
        result: dict[str, Any] = {"content": draw(st.lists(_content_blocks(), max_size=3))}
        schema = tool.get("outputSchema")
        if kind == "tool-error":
            result["isError"] = True
        elif schema is not None:
            result["structuredContent"] = draw(_structured(schema))
        elif draw(st.booleans()):
            result["structuredContent"] = draw(st.dictionaries(_keys(), _values(4), max_size=3))
        if kind == "result" and draw(st.booleans()):
            result["isError"] = False
        reply = {"result": result}
    return CallTool(
        str(tool["name"]), arguments, reply, draw(_notifications()), draw(_notifications())
    )


@st.composite
def _plan(draw: st.DrawFn, revision: str) -> Plan:
    catalogue = draw(_catalogue())
    first = draw(_list_tools(catalogue))  # a call's outputSchema is known from a listing
    rest = draw(st.lists(st.one_of(_call_tool(catalogue), _list_tools(catalogue)), max_size=4))
    return Plan(revision, (first, *rest))


def plans(revision: str = "2025-11-25") -> st.SearchStrategy[Plan]:
    """Plans for a client at `revision` over stdio: the handshake (built into the mock), a
    listing of the tools in pages, then calls and listings, notifications around them."""
    if revision not in FUZZ_REVISIONS:
        raise ValueError(
            f"plans are generated for {', '.join(FUZZ_REVISIONS)} so far, not {revision}"
        )
    return _plan(revision)


# --- reduction -------------------------------------------------------------------------------

_OPTIONAL_TOOL_MEMBERS: Final = ("description", "_meta", "outputSchema")


def smaller_plans(plan: Plan) -> list[Plan]:
    """Plans one structural edit smaller than `plan`, the biggest cuts first: every
    notification gone, one operation gone (the last first), one content block gone, one
    tool of a page gone, one optional member of a tool gone. Each is a valid plan; what a
    client's run of it shows is for the caller to find out."""
    ops = plan.operations
    found: list[Plan] = []
    if any(op.before or op.after for op in ops):
        quiet = tuple(_without_notifications(op) for op in ops)
        found.append(Plan(plan.revision, quiet))
    if len(ops) > 1:
        found.extend(Plan(plan.revision, ops[:i] + ops[i + 1 :]) for i in reversed(range(len(ops))))
    for i, op in enumerate(ops):
        for smaller in _smaller_operation(op):
            found.append(Plan(plan.revision, (*ops[:i], smaller, *ops[i + 1 :])))
    return found


def _without_notifications(op: Operation) -> Operation:
    if isinstance(op, ListTools):
        return ListTools(op.pages)
    return CallTool(op.name, op.arguments, op.reply)


def _smaller_operation(op: Operation) -> list[Operation]:
    if isinstance(op, CallTool):
        result = op.reply.get("result")
        if not isinstance(result, Mapping):
            return []
        content = list(result.get("content", []))
        return [
            CallTool(
                op.name,
                op.arguments,
                {"result": {**result, "content": content[:j] + content[j + 1 :]}},
                op.before,
                op.after,
            )
            for j in range(len(content))
        ]
    found: list[Operation] = []
    for p, page in enumerate(op.pages):
        for t, tool in enumerate(page.tools):
            fewer = Page(page.tools[:t] + page.tools[t + 1 :], page.next_cursor)
            found.append(ListTools((*op.pages[:p], fewer, *op.pages[p + 1 :]), op.before, op.after))
            for member in _OPTIONAL_TOOL_MEMBERS:
                if member in tool:
                    bare = {k: v for k, v in tool.items() if k != member}
                    barer = Page((*page.tools[:t], bare, *page.tools[t + 1 :]), page.next_cursor)
                    pages = (*op.pages[:p], barer, *op.pages[p + 1 :])
                    found.append(ListTools(pages, op.before, op.after))
    return found
