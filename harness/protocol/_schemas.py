"""Validation of MCP messages against the project's own schemas (harness/protocol/schemas/).

`validate` takes one decoded JSON-RPC message, the revision and who sent it, and returns
the violations: a JSON pointer into the message and a readable reason each. It picks the
definition by the message's members and method first and validates against that one
definition, so that a reason names the member at fault instead of "is not valid under any
of the given schemas".
"""

from __future__ import annotations

import copy
import difflib
import functools
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Final, Literal

from harness.protocol._revisions import (
    REVISIONS,
    Revision,
    batches_allowed,
    check_revision,
    is_stateless,
)

if TYPE_CHECKING:
    # Imported when first needed (_registry, _validator): jsonschema's import is a quarter
    # of a driver process's start (its client never validates), and of the CLI's.
    from jsonschema import Draft202012Validator, ValidationError
    from referencing import Registry

__all__ = [
    "Direction",
    "Violation",
    "definition_names",
    "request_methods",
    "schema_document",
    "validate",
    "validate_definition",
]

Direction = Literal["client", "server"]

_PEER: Final[dict[str, Direction]] = {"client": "server", "server": "client"}


@dataclass(frozen=True)
class Violation:
    """What is wrong with a message: where (a JSON pointer into it) and why."""

    pointer: str
    reason: str

    def __str__(self) -> str:
        return f"{self.pointer or '(message)'}: {self.reason}"


# --- loading -------------------------------------------------------------------------------


@functools.cache
def _document(revision: Revision) -> dict[str, Any]:
    name = f"mcp-{revision}.schema.json"
    text = (
        resources.files("harness.protocol")
        .joinpath("schemas")
        .joinpath(name)
        .read_text(encoding="utf-8")
    )
    document: dict[str, Any] = json.loads(text)
    return document


@functools.cache
def _registry(revision: Revision) -> Registry[Any]:
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    document = _document(revision)
    registry: Registry[Any] = Registry().with_resource(
        document["$id"], DRAFT202012.create_resource(document)
    )
    return registry


@functools.cache
def _validator(revision: Revision, name: str) -> Draft202012Validator:
    document = _document(revision)
    if name not in document["$defs"]:
        close = difflib.get_close_matches(name, document["$defs"], n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"no definition {name!r} in the MCP {revision} schema{hint}")
    from jsonschema import Draft202012Validator

    # No format checker: formats (uri, byte, ...) are annotations in the spec's schemas.
    return Draft202012Validator(
        {"$ref": f"{document['$id']}#/$defs/{name}"}, registry=_registry(revision)
    )


def _revision(revision: str) -> Revision:
    return check_revision(revision)  # ValueError listing the known revisions


def schema_document(revision: str) -> dict[str, Any]:
    """The project's schema document of `revision` (a copy: change it freely)."""
    return copy.deepcopy(_document(_revision(revision)))


@functools.cache
def request_methods(revision: str, sender: Direction) -> frozenset[str]:
    """The methods of the requests that `sender` sends at `revision`."""
    return frozenset(_document(_revision(revision))["x-mcp"][sender]["requests"])


def definition_names(revision: str) -> list[str]:
    """The names under `$defs` in the document of `revision`, sorted."""
    return sorted(_document(_revision(revision))["$defs"])


def validate_definition(instance: Any, revision: str, name: str) -> list[Violation]:
    """Violations of `instance` against the definition `name` (e.g. "CallToolResult")."""
    return _check(instance, _revision(revision), name)


# --- messages ------------------------------------------------------------------------------


def validate(
    message: Mapping[str, Any] | list[Any],
    revision: str,
    direction: Direction,
    *,
    request_method: str | None = None,
) -> list[Violation]:
    """Violations of one decoded JSON-RPC message sent by `direction` at `revision`.

    `direction` is who sends it: "client" (client-to-server) or "server". For a response,
    `request_method` (the method of the request it answers) selects the specific result
    type, e.g. "sampling/createMessage" -> CreateMessageResult for a client; without it
    the result is checked against the direction's result union, which admits any object.
    A batch (a list) is a violation except at 2025-03-26, where every member is validated
    (and `request_method`, if given, applies to every response in it).
    """
    rev = _revision(revision)
    if direction not in _PEER:
        raise ValueError(f"direction must be 'client' or 'server', not {direction!r}")
    decoded: Any = message  # whatever JSON decoded to, whatever the annotation says
    if not isinstance(decoded, Mapping | list):
        return [Violation("", f"a JSON-RPC message must be an object, not {_describe(decoded)}")]
    key = _valid_key(decoded, rev, direction, request_method)
    if key is not None and key in _KNOWN_VALID:
        return []
    if isinstance(decoded, Mapping):
        violations = _dedupe(_message(decoded, rev, direction, request_method))
    else:
        violations = _dedupe(_batch(decoded, rev, direction, request_method))
    if key is not None and not violations:
        if len(_KNOWN_VALID) >= _KNOWN_VALID_MAX:
            _KNOWN_VALID.clear()
        _KNOWN_VALID.add(key)
    return violations


_KNOWN_VALID: set[str] = set()
"""Messages found valid in this process, as `_valid_key` writes them. The same messages
come again and again (every run's initialize result, tools/list, the calls of the same
drive), and checking one against the schema takes about 2 ms."""
_KNOWN_VALID_MAX = 8192
_KNOWN_VALID_LONGEST = 16384


def _valid_key(
    message: Mapping[str, Any] | list[Any],
    rev: Revision,
    direction: Direction,
    request_method: str | None,
) -> str | None:
    """What validity depends on, as one string: the message as JSON text with each
    member's JSON-RPC id written as the first id of its JSON type (the schema asks of an
    id only that it be a string or an integer, so 7 and 8 are alike, 7 and "7" and 7.0
    and true are not), the revision, the sender and the request answered. Only valid
    messages are remembered, so a violation's text (which may quote the id) is always
    worked out anew. None for what JSON text cannot hold, and for a large message (a
    payload test's): it is not kept."""

    def typical(member: Any) -> Any:
        if not isinstance(member, Mapping) or "id" not in member:
            return member
        kind = type(member["id"])
        return {**member, "id": 0 if kind is int else "" if kind is str else member["id"]}

    shown = typical(message) if isinstance(message, Mapping) else [typical(m) for m in message]
    try:
        text = json.dumps(shown, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None
    if len(text) > _KNOWN_VALID_LONGEST:
        return None
    return f"{rev} {direction} {request_method}\n{text}"


def _batch(
    batch: list[Any], rev: Revision, direction: Direction, request_method: str | None
) -> Iterator[Violation]:
    if not batches_allowed(rev):
        yield Violation(
            "",
            f"a JSON-RPC batch (an array) is not allowed at MCP {rev}: "
            "only 2025-03-26 admits batches",
        )
        return
    if not batch:
        yield Violation("", "an empty batch: JSON-RPC 2.0 requires at least one message")
        return
    kinds = set()
    for index, item in enumerate(batch):
        if not isinstance(item, Mapping):
            yield Violation(f"/{index}", f"a batch member must be an object, not {_describe(item)}")
            continue
        kinds.add("call" if "method" in item else "response")
        if item.get("method") == "initialize":
            # 2025-03-26 lifecycle: "The initialize request MUST NOT be part of a JSON-RPC batch"
            yield Violation(
                f"/{index}/method", "the initialize request must not be part of a batch"
            )
        for violation in _message(item, rev, direction, request_method):
            yield Violation(f"/{index}{violation.pointer}", violation.reason)
    if len(kinds) > 1:
        yield Violation(
            "",
            "a batch holds either requests and notifications or responses, not both",
        )


def _message(
    message: Mapping[str, Any], rev: Revision, direction: Direction, request_method: str | None
) -> Iterator[Violation]:
    table = _document(rev)["x-mcp"]
    envelopes = table["envelopes"]
    if "method" in message:
        kind = "request" if "id" in message else "notification"
        if "result" in message or "error" in message:
            yield Violation("", 'a message with "method" must not carry "result" or "error"')
            return
    elif "result" in message and "error" in message:
        # JSON-RPC 2.0: "Either the result member or error member MUST be included, but
        # both members MUST NOT be included."
        yield Violation("", 'a response must not carry both "result" and "error"')
        return
    elif "result" in message:
        kind = "result"
    elif "error" in message:
        kind = "error"
    else:
        yield Violation(
            "",
            'not a JSON-RPC message: it has neither "method" (request, notification) '
            'nor "result"/"error" (response)',
        )
        return
    yield from _check(message, rev, envelopes[kind])
    if kind in ("result", "error") and is_stateless(rev) and direction == "client":
        yield Violation(
            "",
            f"a client never sends JSON-RPC responses at MCP {rev}: "
            "the revision has no server-to-client requests",
        )
        return
    if kind in ("request", "notification"):
        method = message["method"]
        if not isinstance(method, str):
            return  # the envelope has said so
        entries = table[direction][kind + "s"]
        if method not in entries:
            yield Violation("/method", _unknown_method(method, rev, direction, kind))
            return
        entry = entries[method]
        yield from _check(message, rev, entry["request"] if kind == "request" else entry)
    elif kind == "result":
        yield from _result(message["result"], rev, direction, request_method)
    else:
        error = message["error"]
        code = error.get("code") if isinstance(error, Mapping) else None
        specific = table["errors"].get(str(code)) if isinstance(code, int) else None
        if specific is not None:
            yield from _check(message, rev, specific)


def _result(
    result: Any, rev: Revision, direction: Direction, request_method: str | None
) -> Iterator[Violation]:
    table = _document(rev)["x-mcp"]
    if request_method is None:
        name = "ClientResult" if direction == "client" else "ServerResult"
        yield from _check(result, rev, name, prefix="/result")
        return
    peer = _PEER[direction]
    entry = table[peer]["requests"].get(request_method)
    if entry is None:
        yield Violation(
            "/result",
            f'"{request_method}" is not a request that a {peer} sends at MCP {rev}, '
            f"so a {direction} has no result type for it",
        )
        return
    name = entry["result"]
    if isinstance(result, Mapping):
        if entry.get("inputRequired") and result.get("resultType") == "input_required":
            name = "InputRequiredResult"  # 2026-07-28 MRTR: the server asks for input
        elif entry.get("taskAugmentable") and "task" in result:
            name = "CreateTaskResult"  # 2025-11-25: the answer to a task-augmented request
    yield from _check(result, rev, name, prefix="/result")


def _unknown_method(method: str, rev: Revision, direction: Direction, kind: str) -> str:
    """Why `method` is not a `kind` that `direction` sends at `rev`, as helpfully as known."""
    table = _document(rev)["x-mcp"]
    peer = _PEER[direction]
    other_kind = "notification" if kind == "request" else "request"
    if method in table[direction][other_kind + "s"]:
        if kind == "request":
            return f'"{method}" is a notification at MCP {rev}: it must not carry an "id"'
        return f'"{method}" is a request at MCP {rev}: it needs an "id"'
    if method in table[peer][kind + "s"]:
        return (
            f'"{method}" is a {peer}-to-{direction} {kind} at MCP {rev}; '
            f"a {direction} does not send it"
        )
    elsewhere = [
        other
        for other in REVISIONS
        if other != rev and method in _document(other)["x-mcp"][direction][kind + "s"]
    ]
    if elsewhere:
        return (
            f'"{method}" is not a {direction} {kind} at MCP {rev} '
            f"(it is one at {', '.join(elsewhere)})"
        )
    return f'unknown method "{method}": not a {direction} {kind} at MCP {rev}'


# --- errors to violations --------------------------------------------------------------------


def _check(instance: Any, rev: Revision, name: str, *, prefix: str = "") -> list[Violation]:
    validator = _validator(rev, name)
    leaves = [leaf for error in validator.iter_errors(instance) for leaf in _leaves(error)]
    leaves.sort(key=lambda e: (list(map(str, e.absolute_path)), str(e.validator)))
    return [Violation(prefix + _pointer(leaf.absolute_path), _reason(leaf)) for leaf in leaves]


def _leaves(error: ValidationError) -> Iterator[ValidationError]:
    """The errors of the branch that fits best, for a failed anyOf/oneOf; else the error."""
    if error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        best = min(branches.values(), key=lambda errors: _mismatch(errors, error))
        for sub in best:
            yield from _leaves(sub)
        return
    yield error


def _mismatch(errors: list[ValidationError], parent: ValidationError) -> tuple[int, int]:
    """How badly a branch misses: a wrong kind of value or discriminator first, then count."""
    depth = len(parent.absolute_path)
    strong = 0
    for error in errors:
        at = len(error.absolute_path) - depth
        if (at == 0 and error.validator == "type") or (
            at == 1 and error.validator in ("const", "enum")
        ):
            strong = 1  # e.g. an object for an array branch, or "type": "image" for text
    return strong, len(errors)


def _pointer(path: Iterable[Any]) -> str:
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


_TYPE_NAMES: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({json.dumps(value)})"
    if isinstance(value, int):
        return f"an integer ({value})"
    if isinstance(value, float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return f"a string ({_json(value)})"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def _json(value: Any, limit: int = 60) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except ValueError:  # e.g. a circular structure
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _reason(error: ValidationError) -> str:
    keyword = error.validator
    value: Any = error.validator_value
    instance: Any = error.instance
    if keyword == "required":
        missing = [name for name in value if isinstance(instance, Mapping) and name not in instance]
        named = next(
            (n for n in missing if error.message.startswith(repr(n))),
            missing[0] if missing else "?",
        )
        return f'missing required member "{named}"'
    if keyword == "type":
        kinds = [value] if isinstance(value, str) else list(value)
        wanted = " or ".join(_TYPE_NAMES.get(kind, kind) for kind in kinds)
        return f"must be {wanted}, not {_describe(instance)}"
    if keyword == "const":
        return f"must be {_json(value)}, not {_json(instance)}"
    if keyword == "enum":
        return f"must be one of {', '.join(_json(v) for v in value)}; not {_json(instance)}"
    if keyword == "minimum":
        return f"must be at least {value}, not {_json(instance)}"
    if keyword == "maximum":
        return f"must be at most {value}, not {_json(instance)}"
    if keyword == "maxItems":
        return f"must have at most {value} items, not {len(instance)}"
    if keyword == "minItems":
        return f"must have at least {value} item(s), not {len(instance)}"
    if keyword in (None, "false") or value is False:
        where = error.absolute_path[-1] if error.absolute_path else ""
        return f'member "{where}" is not allowed here'
    if keyword in ("anyOf", "oneOf"):
        if keyword == "oneOf" and not error.context:
            return "matches more than one of the allowed shapes"
        return f"matches none of the allowed shapes ({_json(instance)})"
    return error.message


def _dedupe(violations: Iterable[Violation]) -> list[Violation]:
    # The envelope and the method's own definition may report the same fault.
    return list(dict.fromkeys(violations))
