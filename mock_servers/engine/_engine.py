"""The replay engine: one script, one server run, independent of the transport.

The transports (stdio, HTTP) decode bytes into messages, hand each to `Engine.handle`,
and carry out the `Outcome`: deliver the reply (as JSON or SSE, after a delay, or not at
all for a fault) and perform the actions that became due (server-initiated messages,
standalone faults). The engine decides *what* happens; the transports decide *how*.

Matching rules (docs/scripts.md):
- a client message is matched against the expect steps not yet consumed, earliest first,
  then against consumed steps marked `repeat`; clients may interleave messages freely;
- send and fault steps fire once every step before them has been consumed;
- what no step matches gets the built-in answers (initialize, ping, server/discover, and
  the defaults of the capabilities the script declares), and otherwise a JSON-RPC error
  naming the closest step and the difference: -32601 only for a method outside every
  declared capability (at 2026-07-28 over HTTP that is the 404 "unknown method" signal).

Spec rules the engine keeps for what it sends (`send_problem`): a server request needs the
client capability it uses (declared in `initialize`, or at 2026-07-28 in the `_meta` of the
request it answers), and at 2026-07-28 a `notifications/message` tied to a request needs
that request's `_meta` logLevel, at or below the message's level. A message that breaks
them without a `violation` mark is withheld: recorded as a `withheld` entry and not sent.
Withholding is what a conformant server does, so the run goes on (unlike the send gate's
`mock_error`, which ends it): a check whose trigger was that message finds it never arose.
"""

from __future__ import annotations

import contextlib
import copy
import marshal
from collections.abc import Mapping
from dataclasses import dataclass, field
from json.encoder import encode_basestring
from typing import Any

import anyio

from harness.protocol import (
    HANDSHAKE_REVISIONS,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    ErrorObject,
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    encode,
    is_request_id,
    is_stateless,
)
from mock_servers.engine._patterns import match, matches
from mock_servers.engine._script import Script, Step, complete_stateless_result
from mock_servers.engine._send_gate import (
    RESPONSE_MEMBERS,
    SendGate,
    base_url_pointers,
    fill_base_url,
    minimal_result,
    split_mark,
)
from mock_servers.engine._transcript import Transcript
from mock_servers.engine._version import package_version

__all__ = [
    "LOG_LEVELS",
    "META_CAPABILITIES",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Action",
    "Delivery",
    "Engine",
    "HttpInfo",
    "Outcome",
    "SendProblem",
    "default_server_info",
    "send_problem",
]

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
UNSUPPORTED_PROTOCOL_VERSION = -32022
MISSING_CLIENT_CAPABILITY = -32021

#: The syslog severities (RFC 5424) of `notifications/message`, least severe first.
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# The server capability each method belongs to, and the revisions that have the method at
# all (None: every revision). A method of a declared capability is never "not found".
_STATEFUL_ONLY = frozenset(HANDSHAKE_REVISIONS)
_METHOD_CAPABILITY: dict[str, tuple[tuple[str, ...], frozenset[str] | None]] = {
    "tools/list": (("tools",), None),
    "tools/call": (("tools",), None),
    "resources/list": (("resources",), None),
    "resources/read": (("resources",), None),
    "resources/templates/list": (("resources",), None),
    "resources/subscribe": (("resources", "subscribe"), _STATEFUL_ONLY),
    "resources/unsubscribe": (("resources", "subscribe"), _STATEFUL_ONLY),
    "prompts/list": (("prompts",), None),
    "prompts/get": (("prompts",), None),
    "logging/setLevel": (("logging",), _STATEFUL_ONLY),
    "completion/complete": (("completions",), None),
    "tasks/get": (("tasks",), frozenset({"2025-11-25"})),
    "tasks/list": (("tasks", "list"), frozenset({"2025-11-25"})),
    "tasks/result": (("tasks",), frozenset({"2025-11-25"})),
    "tasks/cancel": (("tasks", "cancel"), frozenset({"2025-11-25"})),
}

# Client notifications that need no step: recorded as messages, never as unmatched.
_ROUTINE_NOTIFICATIONS = frozenset(
    {
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/roots/list_changed",
    }
)


def default_server_info() -> dict[str, str]:
    return {"name": "mcp-testbench-mock", "version": package_version()}


@dataclass(frozen=True)
class HttpInfo:
    """What the HTTP transport knows about the request that carried a message."""

    method: str
    path: str
    headers: Mapping[str, str]  # lower-case names


@dataclass
class Delivery:
    """How to answer one request (or how to acknowledge a notification or response)."""

    response: Message | None
    before: list[dict[str, Any]] = field(default_factory=list)
    awaits: list[RequestId] = field(default_factory=list)
    delay_ms: int = 0
    fault: dict[str, Any] | None = None
    as_sse: bool | None = None  # None: the transport's default
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    sse: dict[str, Any] = field(default_factory=dict)
    violation: str | None = None
    """The script's mark on the response (or raw body): a deliberate violation."""
    before_marks: list[str | None] = field(default_factory=list)
    """The marks of the `before` messages, index for index (None: unmarked)."""
    origin: str = "a built-in answer"
    """Where the messages come from (a step's label), for the send gate's errors."""
    step: int | None = None
    """The index of the step that answered (None: a built-in answer)."""
    after_cancel: bool = False
    """Held until the client cancels the request (`notifications/cancelled` naming it),
    bounded by the answer timeout: the late response of the cancellation race, whatever
    the client's speed."""


class _Signals:
    """One event per request id, set once, awaitable before or after it is set (ids as
    typed JSON: 1 and "1" stay apart)."""

    def __init__(self) -> None:
        self._events: dict[RequestId, anyio.Event] = {}

    async def wait(self, request_id: RequestId) -> None:
        await self._events.setdefault(request_id, anyio.Event()).wait()

    def set(self, request_id: RequestId) -> None:
        self._events.setdefault(request_id, anyio.Event()).set()


@dataclass(frozen=True)
class Action:
    """A send or fault step that became due: `kind` is "send" or "fault"."""

    kind: str
    payload: dict[str, Any]
    step: Step
    violation: str | None = None  # a send's mark: a deliberate violation


@dataclass
class Outcome:
    delivery: Delivery | None
    actions: list[Action] = field(default_factory=list)
    matched: Step | None = None


def _fill(template: Any, request: Mapping[str, Any]) -> Any:
    """A fresh copy of `template`, each {"$request": "/json/pointer"} replaced by that value
    of the request (or null). The copy shares nothing with the script or the request, so
    whatever is done to it later cannot change the next answer.

    With `"as": "other_type"` the value changes JSON type: an integer becomes its decimal
    string and a string of digits the integer (a response id "1" for the request id 1);
    any other string becomes -1, an id no client issued, of the other type all the same.
    """
    if isinstance(template, dict):
        if "$request" in template:
            if len(template) == 1:
                return copy.deepcopy(_resolve(request, template["$request"]))
            if len(template) == 2 and template.get("as") == "other_type":
                return copy.deepcopy(_other_type(_resolve(request, template["$request"])))
        return {k: _fill(v, request) for k, v in template.items()}
    if isinstance(template, list):
        return [_fill(v, request) for v in template]
    return template


def _mentions_request(template: Any) -> bool:
    if isinstance(template, dict):
        return "$request" in template or any(map(_mentions_request, template.values()))
    if isinstance(template, list):
        return any(map(_mentions_request, template))
    return False


class _Templates:
    """One script's reply templates as one engine sends them (the script keeps every
    template alive, so a template's id names it for the engine's whole life).

    A template with `$request` is filled afresh for each answer. One without is the same
    every time: the engine thaws one private copy of it (marshal keeps JSON's types
    exactly) and sends that copy in every answer. A copy per answer would cost a walk and
    dozens of objects per message, which the garbage collector then walks again and again
    for as long as the transcript holds them. The mock treats what it sent as read-only (a
    2026-07-28 result or a listen's subscription id makes a new message), and `changed`
    checks that at the end of the run. The copy is the engine's own, so nothing done to
    one run's messages reaches another run or the script.
    """

    def __init__(self) -> None:
        # id(template) -> (its origin, its bytes, the copy sent), or None with `$request`
        self._shared: dict[int, tuple[str, bytes, Any] | None] = {}
        self._texts: dict[int, str] = {}  # id(copy) -> its JSON text, for the copies only
        self._based: set[int] = set()  # id(template) of those with `$base_url` templates

    def fill(
        self, template: Any, request: Mapping[str, Any], *, origin: str, base_url: str = ""
    ) -> Any:
        """`template` as sent: its `$request` values from `request`, its `$base_url`
        templates from `base_url` (the same for the engine's whole life, so a template
        with those alone is still shared)."""
        key = id(template)
        if key not in self._shared:
            if base_url_pointers(template):
                self._based.add(key)
            if _mentions_request(template):
                self._shared[key] = None
            else:
                # Version 2: no back-references, so equal values always give equal bytes.
                frozen = marshal.dumps(fill_base_url(template, base_url), 2)
                sent = marshal.loads(frozen)
                self._shared[key] = (origin, frozen, sent)
                with contextlib.suppress(ValueError):  # NaN: the writer's encode says so
                    self._texts[id(sent)] = encode(sent)
        shared = self._shared[key]
        if shared is None:
            return _fill(
                fill_base_url(template, base_url) if key in self._based else template, request
            )
        return shared[2]

    def text_of(self, value: Any) -> str | None:
        """The JSON text of `value` if it is a shared copy (which `_shared` keeps alive, so
        its id names it), else None."""
        return self._texts.get(id(value))

    def changed(self) -> list[str]:
        """The origins of the shared copies that something changed after they went out."""
        return [
            origin
            for origin, frozen, sent in filter(None, self._shared.values())
            if marshal.dumps(sent, 2) != frozen
        ]


def _other_type(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, str):
        return int(value) if value.isascii() and value.isdigit() else -1
    return value


def _resolve(document: Any, pointer: str) -> Any:
    value = document
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and token.isdigit() and int(token) < len(value):
            value = value[int(token)]
        else:
            return None
    return value


def _error_object(error: Mapping[str, Any]) -> ErrorObject:
    if "data" in error:
        return ErrorObject(error["code"], error["message"], error["data"])
    return ErrorObject(error["code"], error["message"])


def _server_message(raw: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The message as sent (its `violation` mark taken off), and the mark."""
    message, mark = split_mark(copy.deepcopy(dict(raw)))
    return {"jsonrpc": "2.0", **message}, mark


def _declared(capabilities: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    """Whether `capabilities` declares `path` (("resources", "subscribe"): a true flag)."""
    value: Any = capabilities
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return False
        value = value[key]
    return value is not False and value is not None


def _capability_problem(message: Mapping[str, Any], client: Mapping[str, Any]) -> str | None:
    """Why a server request needs a client capability that `client` does not declare."""
    method = message.get("method")
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    assert isinstance(params, dict)
    if method == "roots/list" and "roots" not in client:
        return "roots/list, but the client did not declare the roots capability"
    if method == "sampling/createMessage":
        if "sampling" not in client:
            return "sampling/createMessage, but the client did not declare sampling"
        if ("tools" in params or "toolChoice" in params) and not _declared(
            client, ("sampling", "tools")
        ):
            return (
                "a sampling/createMessage with tools, but the client did not declare sampling.tools"
            )
    if method == "elicitation/create":
        elicitation = client.get("elicitation")
        if not isinstance(elicitation, Mapping):
            return "elicitation/create, but the client did not declare elicitation"
        mode = params.get("mode", "form")
        # An empty elicitation object declares form mode (2025-11-25 compatibility rule).
        modes = set(elicitation) & {"form", "url"} or {"form"}
        if mode in ("form", "url") and mode not in modes:
            return f"a {mode}-mode elicitation/create, but the client declared only {sorted(modes)}"
    return None


def _log_level_problem(message: Mapping[str, Any], wanted: Any) -> str | None:
    """2026-07-28: why a notifications/message may not go with a request asking `wanted`."""
    if message.get("method") != "notifications/message":
        return None
    if wanted is None:
        return (
            "notifications/message on a request without _meta "
            f"{META_LOG_LEVEL}: the client did not opt in to log messages"
        )
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    assert isinstance(params, dict)
    level = params.get("level")
    known = wanted in LOG_LEVELS and level in LOG_LEVELS
    if known and LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
        return f"a {level} log message on a request that asked for {wanted} and above"
    return None


@dataclass(frozen=True)
class SendProblem:
    """A spec rule a message would break. `rule`: "undeclared-capability" (the client did
    not declare what the server request needs: the client may be at fault, LC-6, or the
    script), "log-opt-in" or "log-without-request" (2026-07-28 logLevel: the script's)."""

    rule: str
    reason: str

    def __str__(self) -> str:
        return self.reason


def send_problem(
    message: Mapping[str, Any],
    *,
    revision: str,
    client_capabilities: Mapping[str, Any],
    request: Mapping[str, Any] | None = None,
) -> SendProblem | None:
    """Why the mock may not send `message` to this client (None: it may).

    The one place for the engine's spec rules on what it sends; a message (or its step)
    marked `violation` is exempt, which callers decide with `_marked`. `request` is the
    client request the message goes with (None: a `send` step, tied to no request).
    """
    if "method" in message and "id" in message:
        problem = _capability_problem(message, client_capabilities)
        if problem is not None:
            return SendProblem("undeclared-capability", f"the mock would send {problem}")
    log = message.get("method") == "notifications/message"
    if is_stateless(revision) and request is None and log:
        # No listen filter admits log messages: they go only with an opted-in request.
        return SendProblem(
            "log-without-request",
            "the mock would send notifications/message tied to no request (2026-07-28)",
        )
    if is_stateless(revision) and request is not None:
        params = request.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        wanted = meta.get(META_LOG_LEVEL) if isinstance(meta, dict) else None
        problem = _log_level_problem(message, wanted)
        if problem is not None:
            return SendProblem("log-opt-in", f"the mock would send {problem}")
    return None


_SEND_FIX = (
    "script the message for a client that declares what it needs (require it in the step's "
    'expect pattern), or mark the message with "violation": "<why>" if it breaks the spec '
    "on purpose"
)


def _marked(raw: Mapping[str, Any], step: Step) -> bool:
    """A deliberate violation: marked on the message itself (a send step's mark is its
    message's; a reply's `violation` marks only the response, see _response_marked)."""
    return "violation" in raw or (step.kind == "send" and "violation" in step.raw)


def _response_marked(step: Step) -> bool:
    return "violation" in step.raw.get("reply", {})


# The lists a declared capability answers when no step scripts them: (the result's
# member, the method whose steps name the entries, the parameter that names them).
# Resource templates: none, as the steps read resources by their URIs.
_LISTED: dict[str, tuple[str, str | None, str | None]] = {
    "tools/list": ("tools", "tools/call", "name"),
    "prompts/list": ("prompts", "prompts/get", "name"),
    "resources/list": ("resources", "resources/read", "uri"),
    "resources/templates/list": ("resourceTemplates", None, None),
}


class Engine:
    def __init__(
        self, script: Script, revision: str, transport: str, transcript: Transcript
    ) -> None:
        self.script = script
        self.revision = script.pick_revision(revision)
        self.transport = transport
        self.transcript = transcript
        self.gate = SendGate(self.revision, transcript)  # the transports check sends with it
        self.stateless = is_stateless(self.revision)
        self.negotiated_version: str | None = None
        self._consumed: set[int] = set()
        self._fired: set[int] = set()
        self._answered = _Signals()  # server requests the client answered
        self._cancelled = _Signals()  # requests the client cancelled (notifications/cancelled)
        # Ids of the requests the mock sent: the client's answers to them are expected
        # even when no step matches them (the answers a `before` request awaits).
        self._sent_request_ids: set[RequestId] = set()  # int or str: 1 and "1" stay apart
        self._templates = _Templates()
        #: The HTTP mock's URL without its endpoint path, which fills `$base_url`
        #: templates; set by the transport once it listens, before any request.
        self.base_url = ""
        self._settings: dict[int, dict[str, Any]] = {}  # see _reply_settings
        # The expect steps that could match a message, by its method: a pattern naming a
        # literal method matches no other (what `matches` would say, without walking it).
        literal = {
            s.index: m
            for s in script.steps
            if s.kind == "expect" and isinstance(m := s.raw["expect"].get("method"), str)
        }
        expects = [s for s in script.steps if s.kind == "expect"]
        # `after` / `until`: the steps whose consumption opens and retires a step.
        self._gates = {s.index: g for s in expects if (g := script.gates(s)) != (None, None)}
        self._expects_any_method = [s for s in expects if s.index not in literal]
        self._expects_by_method = {
            method: [s for s in expects if literal.get(s.index, method) == method]
            for method in set(literal.values())
        }
        server = script.server
        self.server_info: dict[str, Any] = dict(server.get("info") or default_server_info())
        self.capabilities: dict[str, Any] = dict(server.get("capabilities", {}))
        self.supported_versions: list[str] = list(server.get("supported_versions", [self.revision]))
        # What the client declared in initialize (2026-07-28: per request, in its _meta).
        self.client_capabilities: dict[str, Any] = {}
        self.log_level: str | None = None  # set by logging/setLevel (before 2026-07-28)

    def encode(self, message: Mapping[str, Any] | list[Any]) -> str:
        """`message` (or a batch) as `harness.protocol.encode` writes it; a response
        carrying a shared reply (see `_Templates`) reuses that reply's text, made once."""
        if (
            isinstance(message, Mapping)
            and tuple(message) == RESPONSE_MEMBERS
            and message["jsonrpc"] == "2.0"
        ):
            text = self._templates.text_of(message["result"])
            ident = message["id"]
            # What json.dumps writes for these ids (an id with a lone surrogate, which would
            # make the codec escape the whole line, is not ASCII).
            if text is None:
                pass
            elif type(ident) is int:
                return f'{{"jsonrpc":"2.0","id":{ident},"result":{text}}}'
            elif type(ident) is str and ident.isascii():
                return f'{{"jsonrpc":"2.0","id":{encode_basestring(ident)},"result":{text}}}'
        return encode(message)

    # -- the timeline -------------------------------------------------------------------

    def start(self) -> list[Action]:
        """Actions due before any client message (sends and faults at the top)."""
        return self._due()

    def _due(self) -> list[Action]:
        due = []
        for step in self.script.steps:
            if step.kind == "expect":
                if step.index not in self._consumed and not step.raw.get("optional"):
                    break
                continue
            if step.index in self._fired:
                continue
            self._fired.add(step.index)
            self.transcript.record("step", step=step.index, label=step.label)
            mark = None
            if step.kind == "send":
                if not self._may_send(step.raw["send"], step, None):
                    continue
                payload, mark = _server_message(step.raw["send"])
                mark = mark or step.raw.get("violation")  # a send step's mark is its message's
            else:
                payload = dict(step.raw["fault"])
            if step.kind == "send" and "method" in payload and "id" in payload:
                self._sent_request_ids.add(payload["id"])
            due.append(Action(step.kind, payload, step, mark))
        return due

    def unconsumed(self) -> list[Step]:
        return [
            s
            for s in self.script.steps
            if s.kind == "expect" and s.index not in self._consumed and not s.raw.get("optional")
        ]

    def finish(self) -> None:
        """Record the expected steps that never happened (once, at the end of the run), and
        a `mock_error` if a reply sent as a shared copy was changed afterwards: the answers
        after the change were not the script's."""
        left = self.unconsumed()
        if left:
            self.transcript.record("unconsumed", steps=[s.label for s in left])
        for origin in self._templates.changed():
            self.transcript.record(
                "mock_error",
                where=f"{origin}: the reply",
                revision=self.revision,
                pointer="",
                reason="the mock's copy of this scripted reply changed after it was sent, so "
                "later answers from it were not the script's (an internal error)",
                message={},
            )

    # -- server requests and the client's answers ------------------------------------------

    async def wait_for_client_response(self, request_id: RequestId) -> None:
        """Wait until the client answered server request `request_id` (callers bound it)."""
        await self._answered.wait(request_id)

    async def wait_for_cancel(self, request_id: RequestId) -> None:
        """Wait until the client cancelled its request `request_id` (callers bound it)."""
        await self._cancelled.wait(request_id)

    def _client_cancelled(self, message: Notification) -> None:
        params = message.params if isinstance(message.params, dict) else {}
        request_id = params.get("requestId")
        if is_request_id(request_id):  # typed JSON: true is not the id 1
            self._cancelled.set(request_id)

    def _awaited(self, before: list[dict[str, Any]]) -> list[RequestId]:
        ids = [m["id"] for m in before if "method" in m and "id" in m]
        self._sent_request_ids.update(ids)
        return ids

    def _answers_sent_request(self, message: Message) -> bool:
        if not isinstance(message, (Response, ErrorResponse)) or message.id is None:
            return False
        return message.id in self._sent_request_ids

    # -- one client message ------------------------------------------------------------------

    def handle(
        self, message: Message, *, http: HttpInfo | None = None, channel: str = ""
    ) -> Outcome:
        as_json = message.to_json()
        self.transcript.record("message", direction="client", message=as_json, channel=channel)
        if isinstance(message, (Response, ErrorResponse)) and message.id is not None:
            self._answered.set(message.id)
        elif isinstance(message, Notification) and message.method == "notifications/cancelled":
            self._client_cancelled(message)

        if isinstance(message, Request) and self.stateless:
            refusal = self._check_request_meta(message)
            if refusal is not None:
                return Outcome(refusal)
        if isinstance(message, Request) and message.method == "initialize" and not self.stateless:
            declared = (
                message.params.get("capabilities") if isinstance(message.params, dict) else None
            )
            self.client_capabilities = dict(declared) if isinstance(declared, dict) else {}

        step = self._match(as_json, http)
        if step is not None:
            self._consumed.add(step.index)
            self.transcript.record("step", step=step.index, label=step.label)
            delivery = self._scripted_delivery(step, message, as_json)
            return Outcome(delivery, self._due(), step)

        if isinstance(message, Request):
            builtin = self._builtin(message)
            if builtin is not None:
                return Outcome(Delivery(builtin), self._due())
            return Outcome(Delivery(self._unmatched(message, as_json)), self._due())
        routine = isinstance(message, Notification) and message.method in _ROUTINE_NOTIFICATIONS
        if routine and not (
            message.method == "notifications/initialized"  # type: ignore[union-attr]
            and not self.script.default_enabled("initialized")
        ):
            return Outcome(None, self._due())
        if not self._answers_sent_request(message):  # an awaited answer is no surprise
            self._unmatched(message, as_json)
        return Outcome(None, self._due())

    def _match(self, message: dict[str, Any], http: HttpInfo | None) -> Step | None:
        # The steps still expected, in script order, then the consumed ones that repeat.
        method = message.get("method")
        steps = self._expects_any_method
        if isinstance(method, str):
            steps = self._expects_by_method.get(method, steps)  # as `_expects_for`, inline
        consumed = self._consumed
        gates = self._gates
        for repeats in (False, True):
            for step in steps:
                if (step.index in consumed) != repeats or (repeats and not step.raw.get("repeat")):
                    continue
                if gates and step.index in gates and not self._open(gates[step.index]):
                    continue
                if not matches(step.raw["expect"], message):
                    continue
                if http is not None and not self._http_matches(step, http):
                    continue
                return step
        return None

    def _open(self, gate: tuple[int | None, int | None]) -> bool:
        """Whether a gated step may match now: its `after` step consumed, its `until`
        step not yet."""
        after, until = gate
        return (after is None or after in self._consumed) and (
            until is None or until not in self._consumed
        )

    @staticmethod
    def _http_matches(step: Step, http: HttpInfo) -> bool:
        wanted = step.raw.get("http")
        if not wanted:
            return True
        if "method" in wanted and wanted["method"] != http.method:
            return False
        if "path" in wanted and wanted["path"] != http.path:
            return False
        headers = {k.lower(): v for k, v in wanted.get("headers", {}).items()}
        return matches(headers, dict(http.headers))

    def _scripted_delivery(
        self, step: Step, message: Message, as_json: dict[str, Any]
    ) -> Delivery | None:
        reply = step.raw.get("reply")
        if not isinstance(message, Request):
            if reply and ("status" in reply or "headers" in reply or "body" in reply):
                return Delivery(
                    None,
                    status=reply.get("status"),
                    headers=dict(reply.get("headers", {})),
                    body=reply.get("body"),
                    violation=reply.get("violation"),
                    origin=step.label,
                )
            return None
        reply = reply or {}
        before: list[dict[str, Any]] = []
        before_marks: list[str | None] = []
        for index, m in enumerate(reply.get("before", ())):
            filled = self._templates.fill(
                m, as_json, origin=f"{step.label}: before message {index}", base_url=self.base_url
            )
            if self._may_send(filled, step, as_json):
                sent, mark = _server_message(filled)
                before.append(sent)
                before_marks.append(mark)
        sse = self._checked_sse(dict(reply["sse"]), step, as_json) if "sse" in reply else {}
        response: Message | None = None
        status = reply.get("status")
        if "result" in reply:
            result = self._templates.fill(
                reply["result"], as_json, origin=step.label, base_url=self.base_url
            )
            if self.stateless and isinstance(result, dict) and "violation" not in reply:
                result = complete_stateless_result(message.method, result)
            refusal = self._input_requests_refusal(result, step, as_json)
            if refusal is None:
                response = Response(message.id, result)
            else:
                response, status = ErrorResponse(message.id, refusal), 400
        elif "error" in reply:
            error = self._templates.fill(
                reply["error"], as_json, origin=step.label, base_url=self.base_url
            )
            response = ErrorResponse(message.id, _error_object(error))
        elif "fault" not in reply and "body" not in reply:
            builtin = self._builtin(message)
            response = builtin if builtin is not None else self._minimal(message)
        return Delivery(
            response,
            before=before,
            awaits=self._awaited(before) if before else [],
            status=status,
            sse=sse,
            before_marks=before_marks,
            **self._reply_settings(step),
        )

    def _reply_settings(self, step: Step) -> dict[str, Any]:
        """What a step's reply says beyond its messages (the same on every delivery)."""
        reply = step.raw.get("reply") or {}
        settings = self._settings.get(step.index)
        if settings is None:
            settings = self._settings[step.index] = {
                "delay_ms": int(reply.get("delay_ms", 0)),
                "as_sse": {"json": False, "sse": True}.get(reply.get("as", "")),
                "body": reply.get("body"),
                "violation": reply.get("violation"),
                "origin": step.label,
                "step": step.index,
                "after_cancel": reply.get("after_cancel") is True,
            }
        # Copies: a transport may change what it is given.
        return {
            **settings,
            "fault": dict(reply["fault"]) if "fault" in reply else None,
            "headers": dict(reply["headers"]) if "headers" in reply else {},
        }

    # -- what the mock may send (send_problem) ---------------------------------------------------

    def _capabilities_for(self, request: Mapping[str, Any] | None) -> Mapping[str, Any]:
        if not self.stateless:
            return self.client_capabilities
        # 2026-07-28: only the request's own _meta counts (never inferred from earlier ones).
        params = (request or {}).get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        declared = meta.get(META_CAPABILITIES) if isinstance(meta, dict) else None
        return declared if isinstance(declared, dict) else {}

    def _may_send(
        self, raw: Mapping[str, Any], step: Step, request: Mapping[str, Any] | None
    ) -> bool:
        """Whether to send `raw`; an unmarked message the spec forbids is withheld."""
        problem = send_problem(
            raw,
            revision=self.revision,
            client_capabilities=self._capabilities_for(request),
            request=request,
        )
        if problem is None or _marked(raw, step):
            return True
        self._withhold(step, _server_message(raw)[0], problem)
        return False

    def _withhold(self, step: Step, message: Mapping[str, Any], problem: SendProblem) -> None:
        self.transcript.record(
            "withheld",
            rule=problem.rule,
            step=step.index,
            label=step.label,
            message=dict(message),
            reason=f"{problem.reason}; not sent",
            fix=_SEND_FIX,
        )

    def _checked_sse(
        self, sse: dict[str, Any], step: Step, request: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The SSE items of a reply, a forbidden message replaced by a comment saying so."""
        events = sse.get("events")
        if not isinstance(events, list):
            return sse
        checked = []
        for item in events:
            message = item.get("message") if isinstance(item, dict) else None
            if (
                isinstance(message, dict) and "violation" in item
            ):  # the item's mark is its message's
                message = {**message, "violation": item["violation"]}
            if isinstance(message, dict) and not self._may_send(message, step, request):
                item = {k: v for k, v in item.items() if k != "message"}
                item["comment"] = "mcp-testbench: a message the client may not get was left out"
            checked.append(item)
        return {**sse, "events": checked}

    def _input_requests_refusal(
        self, result: Any, step: Step, request: Mapping[str, Any]
    ) -> ErrorObject | None:
        """2026-07-28: an input request for an undeclared capability is answered -32021,
        as a server must, instead of being sent (and recorded as withheld)."""
        if not self.stateless or not isinstance(result, dict):
            return None
        wanted = result.get("inputRequests")
        if not isinstance(wanted, dict):
            return None
        declared = self._capabilities_for(request)
        missing: dict[str, Any] = {}
        for key, value in list(wanted.items()):
            if not isinstance(value, dict):
                continue
            if "violation" in value:  # a marked input request is sent as it is, unmarked
                wanted[key] = {k: v for k, v in value.items() if k != "violation"}
                continue
            problem = _capability_problem(value, declared)
            if problem is None or _response_marked(step):
                continue
            self._withhold(
                step,
                {"inputRequests": {key: value}},
                SendProblem("undeclared-capability", f"the mock would ask for {problem}"),
            )
            capability = {"roots/list": "roots", "sampling/createMessage": "sampling"}.get(
                str(value.get("method")), "elicitation"
            )
            missing[capability] = {}
        if not missing:
            return None
        return ErrorObject(
            MISSING_CLIENT_CAPABILITY,
            f"Missing required client capability: {', '.join(sorted(missing))}",
            {"requiredCapabilities": missing},
        )

    # -- built-in answers -----------------------------------------------------------------------

    def _minimal(self, request: Request) -> Response:
        """The smallest valid result, for a step that scripts no answer."""
        result = minimal_result(request.method)
        if self.stateless:
            result = complete_stateless_result(request.method, result)
        return Response(request.id, result)

    def _check_request_meta(self, request: Request) -> Delivery | None:
        """2026-07-28: every request carries its protocol version and capabilities."""
        params = request.params if isinstance(request.params, dict) else {}
        meta = params.get("_meta")
        missing = [
            key
            for key in (META_PROTOCOL_VERSION, META_CAPABILITIES)
            if not isinstance(meta, dict) or key not in meta
        ]
        if missing:
            self.transcript.record(
                "note", text=f"request {request.id!r} lacks _meta {', '.join(missing)}"
            )
            error = ErrorObject(
                INVALID_PARAMS, f"Invalid params: _meta must carry {', '.join(missing)}"
            )
            return Delivery(ErrorResponse(request.id, error), status=400)
        assert isinstance(meta, dict)
        requested = meta[META_PROTOCOL_VERSION]
        if requested not in self.supported_versions:
            error = ErrorObject(
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported protocol version {requested!r}",
                {"supported": list(self.supported_versions), "requested": requested},
            )
            return Delivery(ErrorResponse(request.id, error), status=400)
        self.negotiated_version = requested if isinstance(requested, str) else None
        return None

    def _builtin(self, request: Request) -> Message | None:
        method = request.method
        if (
            method == "initialize"
            and not self.stateless
            and self.script.default_enabled("initialize")
        ):
            version = self.script.server.get("protocol_version", self.revision)
            self.negotiated_version = version
            result: dict[str, Any] = {
                "protocolVersion": version,
                "capabilities": self.capabilities,
                "serverInfo": self.server_info,
            }
            if "instructions" in self.script.server:
                result["instructions"] = self.script.server["instructions"]
            return Response(request.id, result)
        if method == "ping" and not self.stateless and self.script.default_enabled("ping"):
            return Response(request.id, {})
        default = self._capability_default(request)
        if default is not None:
            if self.stateless:
                default = complete_stateless_result(method, default)
            return Response(request.id, default)
        if method == "server/discover" and self.script.default_enabled("discover"):
            if not self.stateless:
                return ErrorResponse(
                    request.id, ErrorObject(METHOD_NOT_FOUND, "Method not found: server/discover")
                )
            discovered: dict[str, Any] = {
                "resultType": "complete",
                "supportedVersions": list(self.supported_versions),
                "capabilities": self.capabilities,
                "cacheScope": "public",
                "ttlMs": 0,
                "_meta": {META_SERVER_INFO: self.server_info},
            }
            if "instructions" in self.script.server:
                discovered["instructions"] = self.script.server["instructions"]
            return Response(request.id, discovered)
        return None

    def _has_method(self, method: str) -> bool:
        """Whether `method` belongs to a capability the script declares, at this revision."""
        entry = _METHOD_CAPABILITY.get(method)
        if entry is None:
            return False
        path, revisions = entry
        return (revisions is None or self.revision in revisions) and _declared(
            self.capabilities, path
        )

    def _capability_default(self, request: Request) -> dict[str, Any] | None:
        """The answer of a declared capability's method that no step scripts (docs: Defaults)."""
        method = request.method
        if not self._has_method(method):
            return None
        params = request.params if isinstance(request.params, dict) else {}
        if method == "logging/setLevel":
            level = params.get("level")
            self.log_level = level if isinstance(level, str) else None
            return {}
        if method in ("resources/subscribe", "resources/unsubscribe"):
            return {}
        if method == "completion/complete":
            return {"completion": {"values": [], "total": 0, "hasMore": False}}
        if method in _LISTED and not self._scripts(method):
            return self._listing(method)
        return None

    def _expects_for(self, method: str) -> list[Step]:
        """The expect steps that could match a message of `method` (`_match`'s index)."""
        return self._expects_by_method.get(method, self._expects_any_method)

    def _scripts(self, method: str) -> bool:
        """Whether some expect step of the script is for `method`."""
        return any(
            "method" in s.raw["expect"] and matches(s.raw["expect"]["method"], method)
            for s in self._expects_for(method)
        )

    def _listing(self, method: str) -> dict[str, Any]:
        """A declared capability's list that no step scripts: what the script's steps use
        (the tools called, the prompts got, the resources read), so that a client that
        lists before it calls, or checks a name against the list, finds them."""
        kind, use, member = _LISTED[method]
        if use is None or member is None:
            return {kind: []}
        names: list[str] = []
        for step in self._expects_for(use):
            if step.raw["expect"].get("method") == use:
                name = (step.raw["expect"].get("params") or {}).get(member)
                if isinstance(name, str) and name not in names:
                    names.append(name)
        if kind == "tools":
            return {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
        if kind == "prompts":
            return {"prompts": [{"name": n} for n in names]}
        return {"resources": [{"uri": n, "name": n} for n in names]}

    def _unmatched(self, message: Message, as_json: dict[str, Any]) -> ErrorResponse | None:
        """Record a message no step expected; for a request, the error that explains it."""
        closest, diff = self._closest(as_json)
        self.transcript.record(
            "unmatched", message=as_json, closest=closest.label if closest else None, diff=diff
        )
        if not isinstance(message, Request):
            return None
        same_method = closest is not None and closest.raw["expect"].get("method") == message.method
        params = message.params if isinstance(message.params, dict) else {}
        tool = params.get("name")
        if (
            message.method == "tools/call"
            and self._has_method("tools/call")
            and not any(
                s.kind == "expect"
                and s.raw["expect"].get("method") == "tools/call"
                and (s.raw["expect"].get("params") or {}).get("name") == tool
                for s in self.script.steps
            )
        ):
            # The spec's "Unknown tool" error: -32602, never "method not found".
            code, text = INVALID_PARAMS, f"Unknown tool: {tool}"
        elif same_method or self._has_method(message.method):
            code, text = (
                INVALID_PARAMS,
                f"Invalid params: no scripted step matches this {message.method}",
            )
        else:
            code, text = METHOD_NOT_FOUND, f"Method not found: {message.method}"
        data = {
            "mcp-testbench": "unscripted message",
            "closest_step": closest.label if closest else None,
            "diff": diff,
        }
        return ErrorResponse(message.id, ErrorObject(code, text, data))

    def _closest(self, message: dict[str, Any]) -> tuple[Step | None, list[str]]:
        best: tuple[int, int, Step, list[str]] | None = None
        for step in self.script.steps:
            if step.kind != "expect" or (
                step.index in self._consumed and not step.raw.get("repeat")
            ):
                continue
            pattern = step.raw["expect"]
            diff = [str(m) for m in match(pattern, message)]
            # A step for the same method is closer than any other, whatever the count.
            rank = (0 if pattern.get("method") == message.get("method") else 1, len(diff))
            if best is None or rank < best[:2]:
                best = (*rank, step, diff)
        if best is None:
            return None, []
        return best[2], best[3]
