"""The send gate: every JSON-RPC message a mock writes is valid at send time.

A mock that breaks the spec by accident gives clients false verdicts, so each transport
hands every message to `SendGate.admit` right before writing it: built-in answers, filled
templates (`$request`, and `$base_url`, the HTTP mock's own URL), `before` messages, sends, SSE items, raw bodies that parse as
JSON-RPC, batch members. A message the script marks as a deliberate violation (per
message: docs/scripts.md) goes out unchecked. Any other message that fails its revision's
schema is not sent: the gate records a `mock_error` transcript entry (where, JSON pointer,
revision, reason) and the transport ends the run, which the harness reads as its own
fault (harness/judging/_preconditions.py), never as the client's. `templated_problem` is
the gate's verdict ahead of time for a message with `$request` templates, whatever the
request fills in: what `validate` (mock_servers/engine/_script.py) refuses on load.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.protocol import Message, Violation, request_methods, validate
from mock_servers.engine._transcript import Transcript

__all__ = [
    "BASE_URL",
    "BASE_URL_STAND_IN",
    "MOCK_ERROR_EXIT",
    "RESPONSE_MEMBERS",
    "SendGate",
    "base_url_pointers",
    "fill_base_url",
    "jsonrpc_in_text",
    "minimal_result",
    "split_mark",
    "template_pointers",
    "templated_problem",
]

# The stdio mock's exit status after a mock error (EX_SOFTWARE: an internal software error).
MOCK_ERROR_EXIT = 70

_MARK = "violation"


# The smallest valid result of the methods whose result has required members: what the mock
# answers when a step scripts no answer (a fault that lets the response out, a bare reply).
_MINIMAL_RESULTS: dict[str, dict[str, Any]] = {
    "tools/call": {"content": []},
    "tools/list": {"tools": []},
    "resources/list": {"resources": []},
    "resources/templates/list": {"resourceTemplates": []},
    "resources/read": {"contents": []},
    "prompts/list": {"prompts": []},
    "prompts/get": {"messages": []},
    "completion/complete": {"completion": {"values": []}},
}


def minimal_result(method: str) -> dict[str, Any]:
    """The smallest valid result for a request of `method` (`{}` for most methods)."""
    return dict(_MINIMAL_RESULTS.get(method, {}))


def split_mark(message: Mapping[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A scripted server message without its `violation` member, and that mark."""
    out = dict(message)
    mark = out.pop(_MARK, None)
    return out, mark if isinstance(mark, str) else None


def jsonrpc_in_text(text: str) -> Any:
    """The JSON-RPC message(s) a raw body or SSE `raw` item carries, or None.

    Text that is not JSON, or JSON that is no JSON-RPC object (or array of them), is a
    deliberate fault (garbage, framing tests) rather than a message, and is not checked.
    """
    candidates = [text]
    # An SSE raw item carries its payload on `data:` lines.
    data = [line[5:].lstrip() for line in text.splitlines() if line.startswith("data:")]
    if data:
        candidates.append("\n".join(data))
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if _is_jsonrpc(value) or (
            isinstance(value, list) and value and all(_is_jsonrpc(v) for v in value)
        ):
            return value
    return None


def _is_jsonrpc(value: Any) -> bool:
    return isinstance(value, dict) and value.get("jsonrpc") == "2.0"


# -- templated messages, before the request that fills them ------------------------------------

# One value of each JSON type, a string first (what a template stands for most often); 0
# is both an integer and a number.
_STAND_INS: tuple[Any, ...] = ("", 0, False, None, {}, [])


def _is_template(value: Any) -> bool:
    """A `$request` value as the engine fills it (`_fill` in _engine.py): alone, or with
    `"as": "other_type"`."""
    return (
        isinstance(value, dict)
        and "$request" in value
        and (len(value) == 1 or (len(value) == 2 and value.get("as") == "other_type"))
    )


def template_pointers(value: Any) -> list[str]:
    """The JSON pointers of the `$request` templates in `value`, in document order."""
    return _pointers(value, _is_template)


def _pointers(value: Any, found: Callable[[Any], bool]) -> list[str]:
    """The JSON pointers of the values `found` picks in `value`, in document order (not
    looking inside what it picks)."""
    if found(value):
        return [""]
    if isinstance(value, dict):
        members: Any = value.items()
    elif isinstance(value, list):
        members = enumerate(value)
    else:
        return []
    return [
        f"/{_escape(str(key))}{inner}" for key, item in members for inner in _pointers(item, found)
    ]


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


BASE_URL = "$base_url"
"""`{"$base_url": "/path"}` in a reply: the HTTP mock's own URL without the endpoint path
(`http://localhost:PORT`, known once it listens), then the path. A tool schema's `$ref`
to the server's own origin is the use (docs/scripts.md)."""
BASE_URL_STAND_IN = "http://localhost:1"
"""What a `$base_url` template stands for when the script is checked, before any socket."""


def _is_base_url(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and BASE_URL in value


def base_url_pointers(value: Any) -> list[str]:
    """The JSON pointers of the `$base_url` templates in `value`, in document order."""
    return _pointers(value, _is_base_url)


def fill_base_url(value: Any, base_url: str) -> Any:
    """A copy of `value` with each `$base_url` template replaced by `base_url` and its
    path."""
    if _is_base_url(value):
        return f"{base_url}{value[BASE_URL]}"
    if isinstance(value, dict):
        return {k: fill_base_url(v, base_url) for k, v in value.items()}
    if isinstance(value, list):
        return [fill_base_url(v, base_url) for v in value]
    return value


def _stand_in(value: Any, choices: Mapping[str, Any], at: str = "") -> Any:
    """`value` with the template at each pointer of `choices` replaced by its stand-in."""
    if at in choices:
        return choices[at]
    if isinstance(value, dict):
        return {k: _stand_in(v, choices, f"{at}/{_escape(str(k))}") for k, v in value.items()}
    if isinstance(value, list):
        return [_stand_in(v, choices, f"{at}/{i}") for i, v in enumerate(value)]
    return value


def _within(pointer: str, templates: Sequence[str]) -> bool:
    return any(pointer == t or pointer.startswith(t + "/") for t in templates)


def templated_problem(
    message: Mapping[str, Any], revision: str, *, request_method: str | None = None
) -> tuple[str, str] | None:
    """(pointer, reason) of a schema violation of a templated server message that no
    request could mend, or None: what the gate would refuse once it is filled, whatever
    the request holds.

    A template stands for a value of the request, unknown before it comes. Each is
    replaced by a stand-in of every JSON type in turn, one template at a time, keeping the
    one with the fewest violations elsewhere: a stand-in the schema accepts there, where
    there is one. A violation at or under a template is the request's to decide and is
    not counted; any other (`"type": "txt"` beside a templated `text`) is the script's.
    A message without templates is checked as it stands.
    """
    templates = template_pointers(message)

    def violations(choices: Mapping[str, Any]) -> list[Violation]:
        filled = _stand_in(message, choices)
        return validate(filled, revision, "server", request_method=request_method)

    def score(found: Sequence[Violation]) -> tuple[int, int]:
        return sum(not _within(v.pointer, templates) for v in found), len(found)

    choices = dict.fromkeys(templates, _STAND_INS[0])
    found = violations(choices)
    for pointer in templates:
        if score(found)[0] == 0:
            break
        for stand_in in _STAND_INS[1:]:
            trial = {**choices, pointer: stand_in}
            tried = violations(trial)
            if score(tried) < score(found):
                choices, found = trial, tried
    left = [v for v in found if not _within(v.pointer, templates)]
    return (left[0].pointer, left[0].reason) if left else None


# A gate's verdicts on the results it saw, by the result's identity: the engine sends one
# shared copy of a fixed reply in every answer (read-only, which the engine checks at the
# end of the run), so a repeated answer needs not even the key's text. The memo holds each
# result it names, so no other object can take its id while the verdict stands.
_SEEN_LIMIT = 256
RESPONSE_MEMBERS = ("jsonrpc", "id", "result")
"""A plain response's members, in the order `Response.to_json` writes them."""


class SendGate:
    """Checks what one mock run sends, at `revision`; `errors` are the refusals so far."""

    def __init__(self, revision: str, transcript: Transcript) -> None:
        self.revision = revision
        self.transcript = transcript
        self.errors: list[dict[str, Any]] = []
        self._seen: dict[tuple[int, str | None, type], tuple[Any, tuple[str, str] | None]] = {}

    @property
    def failed(self) -> bool:
        return bool(self.errors)

    def problem(
        self, message: Message | Mapping[str, Any], *, request_method: str | None = None
    ) -> tuple[str, str] | None:
        """(pointer, reason) of the first schema violation of `message`, or None."""
        as_json = message if isinstance(message, Mapping) else message.to_json()
        if "error" in as_json and as_json.get("id") is None and "method" not in as_json:
            # JSON-RPC 2.0 answers input whose id could not be read with id null; the MCP
            # schemas have no such case, and the answer is the JSON-RPC layer's own.
            return None
        if request_method is not None and request_method not in request_methods(
            self.revision, "client"
        ):
            request_method = None  # an unknown method has no result type: check the union
        seen = self._seen_key(as_json, request_method)
        if seen is not None and seen in self._seen:
            return self._seen[seen][1]
        found = self._problem(as_json, request_method)
        if seen is not None:
            if len(self._seen) >= _SEEN_LIMIT:
                self._seen.clear()
            self._seen[seen] = (as_json["result"], found)
        return found

    @staticmethod
    def _seen_key(
        message: Mapping[str, Any], request_method: str | None
    ) -> tuple[int, str | None, type] | None:
        """The identity key of a plain response whose id is an integer or a string."""
        if tuple(message) != RESPONSE_MEMBERS or message["jsonrpc"] != "2.0":
            return None
        ident = message["id"]
        if type(ident) not in (int, str):  # bool, float, null: their own verdicts
            return None
        return id(message["result"]), request_method, type(ident)

    def _problem(
        self, as_json: Mapping[str, Any], request_method: str | None
    ) -> tuple[str, str] | None:
        # A message found valid before, with an id of the same type, costs only its key's
        # text here (`validate` remembers them): a script sends the same answers again
        # and again, and a stdio mock inherits what its fork server checked.
        problems = validate(as_json, self.revision, "server", request_method=request_method)
        return (problems[0].pointer, problems[0].reason) if problems else None

    def admit(
        self,
        message: Message | Mapping[str, Any],
        *,
        where: str,
        request_method: str | None = None,
        violation: str | None = None,
    ) -> bool:
        """Whether `message` may be written; a refusal is recorded as a `mock_error`.

        `where` names the message for the error (e.g. "step 3 (call) reply"),
        `request_method` is the method a response answers, `violation` the script's mark.
        """
        if violation is not None:
            return True
        found = self.problem(message, request_method=request_method)
        if found is None:
            return True
        pointer, reason = found
        as_json = message if isinstance(message, Mapping) else message.to_json()
        entry = {
            "where": where,
            "revision": self.revision,
            "pointer": pointer,
            "reason": reason,
            "message": dict(as_json),
        }
        self.errors.append(entry)
        self.transcript.record("mock_error", **entry)
        return False

    def describe(self) -> str:
        """One line on the first refusal, for logs and HTTP 500 bodies."""
        if not self.errors:
            return ""
        first = self.errors[0]
        return (
            f"mock error: {first['where']}: not a valid {first['revision']} server message "
            f"at {first['pointer'] or '/'}: {first['reason']}; the mock did not send it "
            '(fix the script, or mark the message with "violation" if it is deliberate)'
        )
