"""The runner's rules for its 2026-07-28 client scenarios, applied to the mock's transcript.

As `_parity` does for the older ones: each rule is the one of the pinned runner's
dist/index.js (0.2.0-alpha.12; the classes are named beside each rule), applied to the
HTTP requests as they came, refused or not, since the runner's servers for these scenarios
answer almost everything. JavaScript's semantics are kept where a verdict turns on them:
truthiness, a key present with null versus absent, `String()` of a number, `Number()` of a
header, `trim()`, and Node's lenient Base64.
"""

from __future__ import annotations

import base64
import binascii
import decimal
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from harness.official._parity import (
    _UNPARSED,
    Entry,
    OfficialStatus,
    OfficialVerdict,
    _Post,
    _posts,
    _truthy,
)

__all__ = ["RULES_STATELESS"]

Rule = Callable[[str, Sequence[Entry]], Iterator[OfficialVerdict]]

_MODERN = "2026-07-28"
_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
_INFO_KEY = "io.modelcontextprotocol/clientInfo"
# addOrUpdateCheck (request-metadata): a later status replaces one of lower or equal rank.
_RANK: Mapping[str, int] = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1, "INFO": 1, "SKIPPED": 0}


def _objects(entries: Sequence[Entry], *, path: str | None = None) -> list[_Post]:
    """The POSTs whose body parsed as a JSON object (what the handlers read)."""
    return [p for p in _posts(entries, path=path) if isinstance(p.body, dict)]


def _params(post: _Post) -> dict[str, Any]:
    params = post.body.get("params")
    return params if isinstance(params, dict) else {}


# -- request-metadata (`vn`) ------------------------------------------------------------------

_METADATA_IDS = (
    "sep-2575-http-client-sends-version-header",
    "sep-2575-client-populates-meta",
    "sep-2575-client-sends-client-info",
    "sep-2575-http-version-header-matches-meta",
    "sep-2575-client-declares-roots-capability",
    "sep-2575-client-declares-sampling-capability",
    "sep-2575-client-declares-elicitation-capability",
    "sep-2575-client-retry-supported-version",
)


def _request_metadata(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    # Every POST that parses, any path: each one's checks replace the earlier ones of no
    # higher rank; the first request is refused (-32022) and opens the retry check, which
    # every later request then sets outright.
    found: dict[str, OfficialVerdict] = {}

    def update(check: str, status: OfficialStatus, reason: str, post: _Post) -> None:
        old = found.get(check)
        if old is None or _RANK[status] >= _RANK[old.status]:
            found[check] = OfficialVerdict(check, status, reason, (post.seq,))

    posts = [p for p in _posts(entries) if p.body is not _UNPARSED]
    for index, post in enumerate(posts):
        meta = _params(post).get("_meta") if isinstance(post.body, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        header = post.header("mcp-protocol-version")
        version = meta.get(_VERSION_KEY)
        method = post.method
        update(
            _METADATA_IDS[0],
            "FAILURE" if header is None else "SUCCESS",
            f"{method}: MCP-Protocol-Version {header!r}",
            post,
        )
        capabilities = meta.get(_CAPABILITIES_KEY)
        populated = _truthy(version) and _truthy(capabilities)
        update(
            _METADATA_IDS[1],
            "SUCCESS" if populated else "FAILURE",
            f"{method}: _meta protocolVersion {version!r}, clientCapabilities "
            f"{'present' if _truthy(capabilities) else 'missing'}",
            post,
        )
        info = meta.get(_INFO_KEY)
        update(
            _METADATA_IDS[2],
            "SUCCESS" if _truthy(info) else "WARNING",
            f"{method}: _meta clientInfo {'present' if _truthy(info) else 'missing (a SHOULD)'}",
            post,
        )
        both = header is not None and _VERSION_KEY in meta
        update(
            _METADATA_IDS[3],
            ("SUCCESS" if header == version else "FAILURE") if both else "SKIPPED",
            f"{method}: header {header!r}, _meta {version!r}",
            post,
        )
        for capability, check in zip(
            ("roots", "sampling", "elicitation"), _METADATA_IDS[4:7], strict=True
        ):
            status: OfficialStatus = "SKIPPED"
            if isinstance(capabilities, dict) and capability in capabilities:
                value = capabilities[capability]
                status = "SUCCESS" if isinstance(value, dict) else "FAILURE"
            update(check, status, f"{method}: {capability} {json.dumps(capabilities)}", post)
        retry = _METADATA_IDS[7]
        if index == 0:
            update(retry, "WARNING", f"{method}: the first request, refused with -32022", post)
        else:
            again = header == _MODERN and version == _MODERN
            found[retry] = OfficialVerdict(
                retry,
                "SUCCESS" if again else "WARNING",
                f"after the refusal, {method} came with header {header!r} and _meta {version!r}",
                (*found[retry].evidence, post.seq),
            )
    yield from found.values()
    for check in _METADATA_IDS:
        if check not in found:
            yield OfficialVerdict(
                check,
                "FAILURE",
                "Check was not observed: the client never sent a request to the scenario server"
                if not posts
                else "Check was not observed: no request exercised it",
            )


# -- sep-2322-client-request-state (`xn`, `Sn`) ------------------------------------------------

_MRTR_IDS = (
    "sep-2322-client-request-state-echoed",
    "sep-2322-client-jsonrpc-id-different",
    "sep-2322-client-no-state-omitted",
    "sep-2322-client-parallel-isolation",
    "sep-2322-default-result-type-complete",
)


def _answer_of(entries: Sequence[Entry], post: _Post) -> Any:
    """The JSON body of the mock's HTTP answer to that POST (None if none was recorded)."""
    number = post.entry.get("request")
    for entry in entries:
        if entry.get("kind") == "http_response" and entry.get("request") == number:
            try:
                return json.loads(str(entry.get("body", "")))
            except ValueError:
                return None
    return None


def _request_state(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    # express.json() at /mcp: every tools/call by its tool's name; a call without (truthy)
    # inputResponses is a first call, one with them its retry.
    verdicts: list[OfficialVerdict] = []
    state: Any = None  # the requestState the server handed out last (echo_state)
    original: tuple[bool, Any] = (False, None)  # (seen, id) of the last first call
    for post in _posts(entries, path="/mcp", json_only=True):
        if post.method != "tools/call":
            continue
        params = _params(post)
        name = params.get("name")
        responses = params.get("inputResponses")
        retry = _truthy(responses)
        if name == "test_mrtr_echo_state":
            if not retry:
                original = (True, post.body.get("id"))
                answer = _answer_of(entries, post)
                result = answer.get("result") if isinstance(answer, dict) else None
                state = result.get("requestState") if isinstance(result, dict) else None
                continue
            echoed = params.get("requestState")
            if not _truthy(echoed):
                problem = "Client did not include requestState in retry"
            elif echoed != state:
                problem = (
                    "requestState was not echoed back exactly — clients MUST NOT inspect, "
                    "parse, or modify it"
                )
            else:
                problem = ""
            verdicts.append(
                OfficialVerdict(
                    _MRTR_IDS[0],
                    "FAILURE" if problem else "SUCCESS",
                    problem or f"the retry echoed requestState {echoed!r}",
                    (post.seq,),
                )
            )
            same = original[0] and _same_id(post.body.get("id"), original[1])
            verdicts.append(
                OfficialVerdict(
                    _MRTR_IDS[1],
                    "FAILURE" if same else "SUCCESS",
                    f"JSON-RPC id is the same on retry ({post.body.get('id')!r}) — MUST be "
                    "different"
                    if same
                    else f"the retry's id {post.body.get('id')!r}, the first call's "
                    f"{original[1]!r}",
                    (post.seq,),
                )
            )
        elif name == "test_mrtr_no_state" and retry:
            present = "requestState" in params
            verdicts.append(
                OfficialVerdict(
                    _MRTR_IDS[2],
                    "FAILURE" if present else "SUCCESS",
                    f"Client included requestState ({params.get('requestState')!r}) but the "
                    "server did not send one — MUST NOT include it"
                    if present
                    else "the retry carries no requestState",
                    (post.seq,),
                )
            )
        elif name == "test_mrtr_unrelated":
            carried = [k for k in ("inputResponses", "requestState") if k in params]
            verdicts.append(
                OfficialVerdict(
                    _MRTR_IDS[3],
                    "FAILURE" if carried else "SUCCESS",
                    f"the unrelated call carried {', '.join(carried)} from another tool's flow"
                    if carried
                    else "the unrelated call carried neither inputResponses nor requestState",
                    (post.seq,),
                )
            )
        elif name == "test_mrtr_no_result_type":
            if retry:
                # The runner drops its first verdict of this id, then adds the failure.
                earlier = next((i for i, v in enumerate(verdicts) if v.id == _MRTR_IDS[4]), None)
                if earlier is not None:
                    del verdicts[earlier]
                verdicts.append(
                    OfficialVerdict(
                        _MRTR_IDS[4],
                        "FAILURE",
                        "Client retried with inputResponses even though the result had no "
                        "resultType (should default to complete)",
                        (post.seq,),
                    )
                )
            else:
                verdicts.append(
                    OfficialVerdict(
                        _MRTR_IDS[4], "SUCCESS", "called without inputResponses", (post.seq,)
                    )
                )
    yield from verdicts
    for check in _MRTR_IDS:
        if not any(v.id == check for v in verdicts):
            yield OfficialVerdict(
                check, "FAILURE", "Tool was not called by client or MRTR flow not completed"
            )


def _same_id(one: Any, other: Any) -> bool:
    """JavaScript's `===` on two JSON ids (1 and 1.0 are one number; 1 and "1" differ)."""
    if isinstance(one, bool) or isinstance(other, bool):
        return one is other
    if isinstance(one, (int, float)) and isinstance(other, (int, float)):
        return one == other
    return type(one) is type(other) and one == other


# -- http-standard-headers (`Es`, on the shared `Bt`) -----------------------------------------

_STANDARD = "sep-2243-client-includes-standard-headers"
_STANDARD_METHODS = (
    "initialize",
    "notifications/initialized",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
)
_NAMED = {"tools/call": "name", "resources/read": "uri", "prompts/get": "name"}


def _bt_posts(entries: Sequence[Entry]) -> list[_Post]:
    """What `Bt.handlePost` sees: every path, any content type, a JSON object body, but
    server/discover (answered before it)."""
    return [p for p in _objects(entries) if p.method != "server/discover"]


def _standard_headers(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    # The first request of each method is judged (Mcp-Method), and the first tools/call,
    # resources/read and prompts/get (Mcp-Name); any method not sent is SKIPPED.
    methods: set[str] = set()
    named: set[str] = set()
    for post in _bt_posts(entries):
        method = post.method
        if _truthy(method) and isinstance(method, str) and method not in methods:
            methods.add(method)
            header = post.header("mcp-method")
            if not header:
                problem = f"Missing Mcp-Method header on {method} request"
            elif header != method:
                problem = (
                    f"Mcp-Method header value {header!r} does not match body method {method!r}"
                )
            else:
                problem = ""
            yield OfficialVerdict(
                _STANDARD,
                "FAILURE" if problem else "SUCCESS",
                problem or f"Mcp-Method {header!r} on {method}",
                (post.seq,),
            )
        if method in _NAMED and method not in named:
            named.add(method)
            source = _NAMED[method]
            wanted = _params(post).get(source)
            header = post.header("mcp-name")
            if not header:
                problem = f"Missing Mcp-Name header on {method} request"
            elif header != wanted:
                problem = f"Mcp-Name header value {header!r} does not match body params.{source} {wanted!r}"
            else:
                problem = ""
            yield OfficialVerdict(
                _STANDARD,
                "FAILURE" if problem else "SUCCESS",
                problem or f"Mcp-Name {header!r} on {method}",
                (post.seq,),
            )
    for method in _STANDARD_METHODS:
        if method not in methods:
            yield OfficialVerdict(
                _STANDARD,
                "SKIPPED",
                f"Client did not send a {method} request; Mcp-Method header was not exercised",
            )
    for method in _NAMED:
        if method not in named:
            yield OfficialVerdict(
                _STANDARD,
                "SKIPPED",
                f"Client did not send a {method} request; Mcp-Name header was not exercised",
            )


# -- http-custom-headers (`Is`) ---------------------------------------------------------------

_CUSTOM_IDS = (
    "sep-2243-client-supports-custom-headers",
    "sep-2243-client-mirrors-designated-params",
    "sep-2243-client-encode-values",
    "sep-2243-client-base64-unsafe",
    "sep-2243-client-omit-null",
)
_MIRRORS, _ENCODES, _UNSAFE = _CUSTOM_IDS[1:4]
# (argument, header, declared type) in the order `handleToolsCall` judges them; the first
# two are judged whenever present, the others only when neither absent nor null (the same).
_ANNOTATED_FIRST = (("region", "Region", "string"), ("priority", "Priority", "integer"))
_ANNOTATED_THEN = (
    ("verbose", "Verbose", "boolean"),
    ("debug", "Debug", "boolean"),
    ("empty_val", "EmptyVal", "string"),
    ("method_val", "Method", "string"),
)
_ANNOTATED_LAST = (
    ("non_ascii_val", "NonAscii", "string"),
    ("whitespace_val", "Whitespace", "string"),
    ("leading_space_val", "LeadingSpace", "string"),
    ("trailing_space_val", "TrailingSpace", "string"),
    ("internal_space_val", "InternalSpace", "string"),
    ("control_char_val", "ControlChar", "string"),
    ("crlf_val", "CrLf", "string"),
    ("tab_val", "Tab", "string"),
)
_SENTINEL = re.compile(r"^=\?base64\?(.*)\?=$", re.DOTALL)
# String.prototype.trim's whitespace and line terminators.
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def _custom_headers(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    verdicts: list[OfficialVerdict] = []
    called = called_null = False
    for post in _bt_posts(entries):
        if post.method != "tools/call":
            continue
        params = _params(post)
        arguments = params.get("arguments")
        arguments = arguments if _truthy(arguments) and isinstance(arguments, dict) else {}
        headers = post.entry.get("headers") or {}
        name = params.get("name")
        if name == "test_custom_headers":
            called = True
            mirrored = any(str(h).lower().startswith("mcp-param-") for h in headers)
            verdicts.append(
                OfficialVerdict(
                    _CUSTOM_IDS[0],
                    "SUCCESS" if mirrored else "FAILURE",
                    "Mcp-Param-* headers sent"
                    if mirrored
                    else "Client called test_custom_headers but sent no Mcp-Param-* headers.",
                    (post.seq,),
                )
            )
            for argument, header, kind in (*_ANNOTATED_FIRST, *_ANNOTATED_THEN):
                verdicts.extend(_param_header(post, header, arguments.get(argument), kind))
            verdicts.append(_not_mirrored(post, "FloatVal"))
            for argument, header, kind in _ANNOTATED_LAST:
                verdicts.extend(_param_header(post, header, arguments.get(argument), kind))
            verdicts.append(_not_mirrored(post, "Query"))
        elif name == "test_custom_headers_null":
            called_null = True
            sent = post.header("mcp-param-verbose")
            verdicts.append(
                OfficialVerdict(
                    _CUSTOM_IDS[4],
                    "SUCCESS" if sent is None else "FAILURE",
                    "no Mcp-Param-Verbose for a null verbose"
                    if sent is None
                    else f"Mcp-Param-Verbose should be omitted when null/undefined, but got {sent!r}",
                    (post.seq,),
                )
            )
    yield from verdicts
    for check in _CUSTOM_IDS:
        if any(v.id == check for v in verdicts):
            continue
        if check == _CUSTOM_IDS[4] and not called_null:
            why = "Client did not send a tools/call request for test_custom_headers_null"
        elif called:
            why = "Check was not observed: no tool call exercised it."
        else:
            why = "Client did not send a tools/call request for test_custom_headers."
        yield OfficialVerdict(check, "FAILURE", why)


def _not_mirrored(post: _Post, header: str) -> OfficialVerdict:
    sent = post.header(f"mcp-param-{header.lower()}")
    return OfficialVerdict(
        _MIRRORS,
        "SUCCESS" if sent is None else "FAILURE",
        f"no Mcp-Param-{header} for an unannotated parameter"
        if sent is None
        else f"Found unexpected Mcp-Param-{header} header {sent!r} for an unannotated parameter",
        (post.seq,),
    )


def _param_header(post: _Post, header: str, value: Any, kind: str) -> list[OfficialVerdict]:
    """`checkParamHeader`: nothing for a null or absent argument; else the header must
    carry the argument's value (Base64 when the value needs it)."""
    if value is None:
        return []
    sent = post.header(f"mcp-param-{header.lower()}")
    if sent is None:
        problem = f"Missing Mcp-Param-{header} header. Client MUST include headers for x-mcp-header parameters."
    else:
        wanted = ("true" if _truthy(value) else "false") if kind == "boolean" else _js_string(value)
        problem = _header_problem(sent, wanted, kind)
    unsafe = isinstance(value, str) and _needs_base64(value)
    if unsafe:
        check = _UNSAFE
    elif kind in ("number", "integer", "boolean"):
        check = _ENCODES
    else:
        check = _MIRRORS
    return [
        OfficialVerdict(
            check,
            "FAILURE" if problem else "SUCCESS",
            problem
            or f"Mcp-Param-{header} {sent!r} carries {json.dumps(value, ensure_ascii=False)}",
            (post.seq,),
        )
    ]


def _needs_base64(text: str) -> bool:
    """`Ns`: a character outside printable ASCII, or whitespace at either end."""
    return any(not 32 <= ord(c) <= 126 for c in text) or text != text.strip(_JS_SPACE)


def _header_problem(sent: str, wanted: str, kind: str) -> str:
    """`Ps`: why the header does not carry `wanted` ("" when it does)."""
    numeric = kind in ("number", "integer")
    if _needs_base64(wanted):
        found = _SENTINEL.match(sent)
        if found is None:
            return (
                f"Value {wanted!r} requires Base64 encoding but header was sent as plain: {sent!r}"
            )
        decoded = _node_base64(found.group(1))
        if numeric:
            return _number_problem(decoded, wanted)
        return (
            ""
            if decoded == wanted
            else f"Base64-decoded header value {decoded!r} does not match body value {wanted!r}"
        )
    found = _SENTINEL.match(sent)
    shown = _node_base64(found.group(1)) if found else sent
    if numeric:
        return _number_problem(shown, wanted)
    return (
        ""
        if shown == wanted
        else f"Header value {shown!r} (raw: {sent!r}) does not match body value {wanted!r}"
    )


def _number_problem(header: str, body: str) -> str:
    """`Fs`: the two as JavaScript numbers; integers equal, others within 1e-9."""
    sent, wanted = _js_number(header), _js_number(body)
    if math.isnan(sent) or math.isnan(wanted):
        return f"Non-numeric value in number comparison: header={header!r}, body={body!r}"
    if wanted.is_integer():
        return (
            ""
            if sent == wanted
            else f"Numeric header value {sent} does not match body value {wanted}"
        )
    if abs(sent - wanted) > 1e-9:
        return f"Numeric header value {sent} does not match body value {wanted} (beyond 1e-9)"
    return ""


_JS_DECIMAL = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def _js_number(text: str) -> float:
    """`Number(text)` for a header or a body value."""
    text = text.strip(_JS_SPACE)
    if text == "":
        return 0.0
    if text in ("Infinity", "+Infinity", "-Infinity"):
        return -math.inf if text.startswith("-") else math.inf
    for prefix, base in (("0x", 16), ("0o", 8), ("0b", 2)):
        if text[:2].lower() == prefix:
            try:
                return float(int(text[2:], base))
            except ValueError:
                return math.nan
    return float(text) if _JS_DECIMAL.match(text) else math.nan


def _js_string(value: Any) -> str:
    """`String(value)` for a JSON value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_float(value)
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, list):
        return ",".join("" if v is None else _js_string(v) for v in value)
    return "[object Object]"


def _js_float(value: float) -> str:
    """Number.prototype.toString of a float: its shortest digits, in positional notation
    from 1e-6 up to 1e21 and in exponent notation beyond."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    shortest = decimal.Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(str(d) for d in shortest.digits)
    point = len(digits) + int(shortest.exponent)  # where the decimal point goes
    if len(digits) <= point <= 21:
        return sign + digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return f"{sign}{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    mantissa = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
    exponent = point - 1
    return f"{sign}{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"


def _node_base64(text: str) -> str:
    """`Buffer.from(text, "base64").toString("utf-8")`: Node skips what is not Base64
    (URL-safe letters count), stops at padding, and replaces invalid UTF-8."""
    letters = "".join(
        c for c in text.split("=", 1)[0] if c.isascii() and (c.isalnum() or c in "+/-_")
    )
    letters = letters.replace("-", "+").replace("_", "/")
    letters = letters[: len(letters) - (len(letters) % 4 == 1)]
    try:
        raw = base64.b64decode(letters + "=" * (-len(letters) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    return raw.decode("utf-8", errors="replace")


# -- http-invalid-tool-headers (`Ls`) ---------------------------------------------------------

#: The tools whose x-mcp-header is invalid, and the check that fails when one is called.
_INVALID_TOOLS = (
    ("invalid_empty_header", "sep-2243-x-mcp-header-not-empty"),
    ("invalid_object_header", "sep-2243-x-mcp-header-primitive-only"),
    ("invalid_array_header", "sep-2243-x-mcp-header-primitive-only"),
    ("invalid_null_header", "sep-2243-x-mcp-header-primitive-only"),
    ("invalid_number_header", "sep-2243-x-mcp-header-primitive-only"),
    ("invalid_duplicate_same_case", "sep-2243-x-mcp-header-unique"),
    ("invalid_duplicate_diff_case", "sep-2243-x-mcp-header-unique"),
    ("invalid_space_in_name", "sep-2243-x-mcp-header-charset"),
    ("invalid_colon_in_name", "sep-2243-x-mcp-header-charset"),
    ("invalid_non_ascii_name", "sep-2243-x-mcp-header-charset"),
    ("invalid_control_char_name", "sep-2243-x-mcp-header-charset"),
)


def _invalid_tool_headers(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    posts = _bt_posts(entries)
    listed = [p for p in posts if p.method == "tools/list"]
    calls: dict[str, list[int]] = {}
    for post in posts:
        name = _params(post).get("name") if post.method == "tools/call" else None
        if _truthy(name) and isinstance(name, str):
            calls.setdefault(name, []).append(post.seq)
    if not listed:
        yield OfficialVerdict(
            "sep-2243-invalid-tool-tools-list-gate",
            "FAILURE",
            "Client did not send a tools/list request.",
        )
    kept = "valid_tool" in calls
    yield OfficialVerdict(
        "sep-2243-client-reject-invalid-tool",
        "SUCCESS" if kept else "FAILURE",
        "the client called valid_tool"
        if kept
        else "Client did not call 'valid_tool': one malformed tool must not keep the others "
        "from being used",
        tuple(calls.get("valid_tool", ())),
    )
    for tool, check in _INVALID_TOOLS:
        wrong = tool in calls
        yield OfficialVerdict(
            check,
            "FAILURE" if wrong else "SUCCESS",
            f"Client called {tool!r}, which has an invalid x-mcp-header"
            if wrong
            else f"the client did not call {tool!r}",
            tuple(calls.get(tool, ())),
        )


# -- json-schema-ref-no-deref (`Hs`) ------------------------------------------------------------

_NO_DEREF = "sep-2106-no-network-ref-deref"
_CANARY_PATH = "/canary/profile-schema.json"
# The pinned SDK's (its `Server` behind the scenario's POST /mcp route) protocol versions,
# after the route rewrote a 2026-07-28 header to its own latest; and its batch limit.
_SDK_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07")
_SDK_MAX_BATCH = 100
_REQUEST_MEMBERS = frozenset({"jsonrpc", "id", "method", "params"})


def _canary_requests(entries: Sequence[Entry]) -> list[Entry]:
    """`app.all(CANARY_PATH)`: every method; express matches paths ignoring case and a
    trailing slash (the transcript's path has no query string). Its `express.json()`
    comes first, and refuses a JSON body it cannot parse before the route counts it."""
    return [
        e
        for e in entries
        if e.get("kind") == "http_request"
        and str(e.get("path", "")).lower().rstrip("/") == _CANARY_PATH
        and not _express_json_refuses(e)
    ]


def _express_json_refuses(entry: Entry) -> bool:
    """`express.json()` (strict): a JSON content type with a body that is not an object or
    an array answers 400 before any route; an empty body is taken as {}."""
    headers = entry.get("headers") or {}
    media = str(headers.get("content-type", "")).split(";")[0].strip().lower()
    body = str(entry.get("body", "")).strip()
    if media != "application/json" or not body:
        return False
    try:
        return not isinstance(json.loads(body), (dict, list))
    except ValueError:
        return True


def _sdk_request(message: Any) -> bool:
    """A JSON-RPC request as the SDK's strict schema parses one."""
    return (
        isinstance(message, dict)
        and set(message) <= _REQUEST_MEMBERS
        and message.get("jsonrpc") == "2.0"
        and isinstance(message.get("method"), str)
        and type(message.get("id")) in (str, int)
        and isinstance(message.get("params", {}), dict)
    )


def _sdk_message(message: Any) -> bool:
    """Any JSON-RPC message the SDK's transport parses (a request, a notification, a
    response), loosely for the last three: what matters is that the batch is not refused."""
    return isinstance(message, dict) and message.get("jsonrpc") == "2.0"


def _lists_tools(post: _Post) -> bool:
    """Whether the runner's route and its SDK transport let this POST reach the tools/list
    handler (its `toolsListed`): server/discover is answered before the SDK; then the
    transport's Accept (a substring test), Content-Type (the media type), batch,
    message and version-header checks; a tools/list request whose cursor, if any, is a
    string."""
    if post.method == "server/discover":
        return False
    accept = post.header("accept") or ""
    if "application/json" not in accept or "text/event-stream" not in accept:
        return False
    media = (post.header("content-type") or "").split(";")[0].strip().lower()
    if media != "application/json":
        return False
    messages = post.body if isinstance(post.body, list) else [post.body]
    if len(messages) > _SDK_MAX_BATCH or not all(_sdk_message(m) for m in messages):
        return False
    initializing = any(_sdk_request(m) and m["method"] == "initialize" for m in messages)
    version = post.header("mcp-protocol-version")
    if version == _MODERN:
        version = _SDK_VERSIONS[0]
    if not initializing and version is not None and version not in _SDK_VERSIONS:
        return False
    return any(
        _sdk_request(m)
        and m["method"] == "tools/list"
        and isinstance(m.get("params", {}).get("cursor", ""), str)
        for m in messages
    )


def _no_ref_deref(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    # One verdict at the end: was the tool schema ever listed, and was its canary fetched.
    listed = [p for p in _posts(entries, json_only=True) if _route_is_mcp(p) and _lists_tools(p)]
    canary = _canary_requests(entries)
    if not listed:
        yield OfficialVerdict(
            _NO_DEREF,
            "FAILURE",
            "Client did not call tools/list against a server advertising a tool with a "
            "network $ref",
            tuple(int(e.get("seq", -1)) for e in canary),
        )
        return
    fetched = ", ".join(f"{e.get('method')} {e.get('path')}" for e in canary[:3])
    yield OfficialVerdict(
        _NO_DEREF,
        "FAILURE" if canary else "SUCCESS",
        f"Canary URL {_CANARY_PATH} was fetched {len(canary)} time(s) ({fetched}): the "
        "client dereferenced the network $ref of the tool's inputSchema"
        if canary
        else f"the client listed the tools and never requested {_CANARY_PATH}",
        (listed[0].seq, *(int(e.get("seq", -1)) for e in canary)),
    )


def _route_is_mcp(post: _Post) -> bool:
    """`app.post("/mcp")`: express ignores case and a trailing slash."""
    return str(post.entry.get("path", "")).lower().rstrip("/") == "/mcp"


RULES_STATELESS: Mapping[str, Rule] = {
    "request-metadata": _request_metadata,
    "sep-2322-client-request-state": _request_state,
    "http-standard-headers": _standard_headers,
    "http-custom-headers": _custom_headers,
    "http-invalid-tool-headers": _invalid_tool_headers,
    "json-schema-ref-no-deref": _no_ref_deref,
}
"""The rules of the 2026-07-28 scenarios, by scenario (`_parity.official_verdicts` adds them)."""
