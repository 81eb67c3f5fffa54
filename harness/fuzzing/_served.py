"""A plan as it is served: at a revision, over a transport, each reply in a framing.

`_plans` draws what the server does at 2025-11-25 over stdio. A `ServedPlan` is that plan
adapted to where it is served, and written as a script for it:

- at 2026-07-28 (stateless) the server sends nothing around an answer: a notification
  goes with a request only when the request asked for it (a log message's `logLevel`), a
  change notification only to a subscription, and there are no server requests as such;
  the plans ask for none of those, so every message and fault around an operation goes;
- over Streamable HTTP a message sent after an answer travels on the GET stream, which a
  client MAY never open, and stdio's faults do not exist: the requests and faults after
  an answer go (notifications stay), a crash becomes a dropped connection, and a reply
  with messages before it is an SSE stream, so that they reach the client on the
  request's own stream; at 2026-07-28 a dropped connection is a broken stream, whose
  request the client re-issues with a new id (HM-5), so its step repeats: the server
  never answers that request, however often it is asked;
- over HTTP each reply is drawn a framing (`http_framing`): a JSON body, or an SSE
  stream with comments, events carrying only a `retry`, priming events, event ids, the
  response's JSON spread over several `data:` lines, and chunk boundaries anywhere
  (docs/scripts.md: `as`, `sse`). Ids, priming and `retry` are for 2025-11-25, whose
  streams are resumable; at 2026-07-28 they are not, and none is drawn.

The framings are kept per answering step, in script order, and read back from a saved
script with the plan (`served_of_script`).
"""

from __future__ import annotations

import dataclasses
import json
import string
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from hypothesis import strategies as st

from harness.fuzzing._plans import (
    Listing,
    Operation,
    Plan,
    plan_of_script,
    plans,
    smaller_plans,
)
from harness.protocol import STATELESS_REVISIONS

__all__ = [
    "FUZZ_REVISIONS",
    "FUZZ_TRANSPORTS",
    "ServedPlan",
    "http_framing",
    "served_of_script",
    "served_plans",
    "smaller_served",
]

#: The revisions a plan is served at.
FUZZ_REVISIONS: Final = ("2025-11-25", "2026-07-28")
#: The transports a plan is served over (`http`: Streamable HTTP, the uvicorn mock).
FUZZ_TRANSPORTS: Final = ("stdio", "http")

_DRAWN_AT: Final = "2025-11-25"
"""The revision `_plans` draws for; the others are adapted from it."""
_FRAMING_MEMBERS: Final = ("as", "sse")
_EVENT_ID_CHARS: Final = string.ascii_letters + string.digits + "-_.:"
_MAX_RETRY_MS: Final = 300
"""A client waits out `retry` before it resumes a stream that broke (HT-7): kept short, so
that a plan whose answer drops the connection costs well under a second, not the time-out."""


@dataclass(frozen=True)
class ServedPlan:
    plan: Plan
    """What the server does (its revision is the one served)."""
    transport: str = "stdio"
    framing: tuple[Mapping[str, Any], ...] = ()
    """HTTP: the framing of each answering step, in script order (missing: a JSON body)."""

    @property
    def revision(self) -> str:
        return self.plan.revision

    def to_script(self, name: str = "fuzz") -> dict[str, Any]:
        """The plan as an ordinary script for its transport and revision."""
        script = self.plan.to_script(name)
        script["transports"] = [self.transport]
        for step, framing in zip(_answering(script), self.framing, strict=False):
            step["reply"].update(framing)
        if self.transport == "http" and self.revision in STATELESS_REVISIONS:
            for step in _answering(script):
                if "fault" in step["reply"]:
                    step["repeat"] = True  # each re-issue of the request breaks again
        return script

    def to_json_text(self) -> str:
        return json.dumps(self.to_script(), indent=1, ensure_ascii=False)


def _answering(script: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The steps that answer a request of the client, in order."""
    return [
        step
        for step in script.get("steps", [])
        if "reply" in step and "method" in step.get("expect", {})
    ]


def served_of_script(script: Mapping[str, Any]) -> ServedPlan:
    """The served plan a script written by `ServedPlan.to_script` holds (ValueError: not a
    fuzz script)."""
    bare = json.loads(json.dumps(script))  # a copy, to take the framing out of
    framing: list[Mapping[str, Any]] = []
    for step in _answering(bare):
        framing.append({k: step["reply"].pop(k) for k in _FRAMING_MEMBERS if k in step["reply"]})
        step.pop("repeat", None)  # `to_script` sets it
    transports = bare.get("transports") or ["stdio"]
    bare["transports"] = ["stdio"]
    transport = str(transports[0])
    if transport not in FUZZ_TRANSPORTS:
        raise ValueError(f"a fuzz script is served over {' or '.join(FUZZ_TRANSPORTS)}")
    kept = tuple(framing) if any(framing) else ()
    return ServedPlan(plan_of_script(bare), transport, kept)


def is_request(message: Mapping[str, Any]) -> bool:
    return "method" in message and "id" in message


def adapt(plan: Plan, revision: str, transport: str) -> Plan:
    """`plan` (drawn at 2025-11-25 over stdio) as it can be served at `revision` over
    `transport` (the module's docstring says what changes)."""
    operations: list[Operation] = []
    for op in plan.operations:
        if revision in STATELESS_REVISIONS:
            op = dataclasses.replace(op, before=(), after=())
        if transport == "http":
            after = tuple(m for m in op.after if "fault" not in m and not is_request(m))
            op = dataclasses.replace(op, after=after)
            if not isinstance(op, Listing) and _crashes(op.reply):
                op = dataclasses.replace(op, reply={"fault": {"kind": "drop_connection"}})
        operations.append(op)
    return Plan(revision, tuple(operations))


def _crashes(reply: Mapping[str, Any]) -> bool:
    fault = reply.get("fault")
    return isinstance(fault, Mapping) and fault.get("kind") == "crash"


@st.composite
def http_framing(draw: st.DrawFn, revision: str, sse_only: bool = False) -> dict[str, Any]:
    """How one reply travels over Streamable HTTP (`as`, `sse` of docs/scripts.md)."""
    if not sse_only and draw(st.booleans()):
        return {"as": "json"}
    resumable = revision not in STATELESS_REVISIONS
    comment = st.builds(lambda text: {"comment": text}, st.text(max_size=10))
    event_id = st.text(_EVENT_ID_CHARS, min_size=1, max_size=8)
    leading = [comment]
    if resumable:
        leading += [
            st.just({"prime": True}),
            st.builds(lambda i: {"prime": True, "id": i}, event_id),
            st.builds(lambda r: {"retry": r}, st.integers(0, _MAX_RETRY_MS)),
        ]
    response: dict[str, Any] = {"response": True}
    if draw(st.booleans()):
        response["multiline"] = True
    if draw(st.booleans()):
        response["event"] = "message"
    if resumable and draw(st.booleans()):
        response["id"] = draw(event_id)
    events = [
        *draw(st.lists(st.one_of(leading), max_size=3)),
        response,
        *draw(st.lists(comment, max_size=1)),
    ]
    sse: dict[str, Any] = {"events": events}
    if draw(st.booleans()):
        sse["chunk_size"] = draw(st.one_of(st.integers(1, 8), st.integers(9, 200)))
    if resumable and draw(st.booleans()):
        sse["retry"] = draw(st.integers(0, _MAX_RETRY_MS))
    return {"as": "sse", "sse": sse}


@st.composite
def _served(draw: st.DrawFn, revision: str, transport: str) -> ServedPlan:
    plan = adapt(draw(plans(_DRAWN_AT)), revision, transport)
    if transport != "http":
        return ServedPlan(plan, transport)
    steps = _answering(plan.to_script())
    framing = tuple(
        draw(http_framing(revision, sse_only=bool(step["reply"].get("before")))) for step in steps
    )
    return ServedPlan(plan, transport, framing)


def served_plans(
    revision: str = "2025-11-25", transport: str = "stdio"
) -> st.SearchStrategy[ServedPlan]:
    """Plans served at `revision` over `transport` (the Hypothesis strategy)."""
    if revision not in FUZZ_REVISIONS:
        raise ValueError(f"plans are served at {', '.join(FUZZ_REVISIONS)}, not {revision}")
    if transport not in FUZZ_TRANSPORTS:
        raise ValueError(f"plans are served over {', '.join(FUZZ_TRANSPORTS)}, not {transport}")
    return _served(revision, transport)


def smaller_served(served: ServedPlan) -> list[ServedPlan]:
    """First, when there is framing, the same plan with every reply a JSON body; then
    `smaller_plans` of the plan, each served the same way (a framing stays with its step
    while the steps before it stay). A candidate with messages before a JSON body is left
    out (they would go on a GET stream)."""
    candidates = [ServedPlan(served.plan, served.transport)] if served.framing else []
    candidates += [_fitted(plan, served) for plan in smaller_plans(served.plan)]
    return [c for c in candidates if c.transport != "http" or _framed_where_needed(c)]


def _fitted(plan: Plan, served: ServedPlan) -> ServedPlan:
    """`plan` served as `served` is, with a framing for each of its answering steps only
    (what a saved script holds, and reads back)."""
    framing = served.framing[: len(_answering(plan.to_script()))]
    return ServedPlan(plan, served.transport, framing if any(framing) else ())


def _framed_where_needed(served: ServedPlan) -> bool:
    steps = _answering(served.plan.to_script())
    framing = list(served.framing) + [{}] * max(0, len(steps) - len(served.framing))
    return all(
        not step["reply"].get("before") or frame.get("as") == "sse"
        for step, frame in zip(steps, framing, strict=False)
    )
