"""The runner's rules for the 2026-07-28 client scenarios, each on made-up transcripts.

Every rule is the one of @modelcontextprotocol/conformance 0.2.0-alpha.12 (`vn`
request-metadata, `xn` sep-2322-client-request-state, `Es`, `Is` and `Ls` the header
scenarios); each test names the case of that code it pins, and each rule is shown failing.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from typing import Any

import pytest

from harness.official import official_verdicts, scenario_verdict, served_scenario

Entry = dict[str, Any]
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
}


class Transcript:
    """HTTP requests (and the mock's answers) as the HTTP mock records them."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.requests = 0

    def post(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        headers: dict[str, str] | None = None,
        path: str = "/",
        id_: Any = None,
        answer: Any = None,
    ) -> None:
        self.requests += 1
        body = {"jsonrpc": "2.0", "id": self.requests if id_ is None else id_, "method": method}
        body["params"] = {"_meta": META} if params is None else params
        sent = {"content-type": "application/json", **(headers or {})}
        self.entries.append(
            {"seq": len(self.entries), "t": 0.0, "kind": "http_request", "request": self.requests,
             "method": "POST", "path": path, "headers": sent, "body": json.dumps(body)}
        )  # fmt: skip
        if answer is not None:
            self.entries.append(
                {"seq": len(self.entries), "t": 0.0, "kind": "http_response",
                 "request": self.requests, "status": 200, "body": json.dumps(answer)}
            )  # fmt: skip


def served(name: str) -> Any:
    scenario = served_scenario(name)
    assert scenario is not None
    return scenario


def _statuses(scenario: str, transcript: Transcript) -> list[str]:
    return [f"{v.id} {v.status}" for v in official_verdicts(scenario, MODERN, transcript.entries)]


def _counts(scenario: str, transcript: Transcript) -> Counter[str]:
    return Counter(v.status for v in official_verdicts(scenario, MODERN, transcript.entries))


# -- request-metadata ------------------------------------------------------------------------

VERSION = {"mcp-protocol-version": MODERN}


def _meta(**changes: Any) -> dict[str, Any]:
    meta = {**META, **changes}
    return {"_meta": {k: v for k, v in meta.items() if v is not None}}


def test_request_metadata_passes_a_client_that_retries_with_everything() -> None:
    transcript = Transcript()
    capabilities: dict[str, Any] = {"roots": {}, "sampling": {}, "elicitation": {}}
    params = _meta(**{"io.modelcontextprotocol/clientCapabilities": capabilities})
    transcript.post("server/discover", params, headers=VERSION)
    transcript.post("server/discover", params, headers=VERSION)
    verdict = scenario_verdict(served("request-metadata"), MODERN, transcript.entries)
    assert verdict.line == "✓ request-metadata: 8 passed, 0 failed"
    assert verdict.passes


def test_request_metadata_skips_undeclared_capabilities_and_still_passes() -> None:
    transcript = Transcript()
    transcript.post("server/discover", headers=VERSION)
    transcript.post("tools/list", headers=VERSION)
    statuses = _statuses("request-metadata", transcript)
    assert "sep-2575-client-declares-roots-capability SKIPPED" in statuses
    verdict = scenario_verdict(served("request-metadata"), MODERN, transcript.entries)
    assert verdict.line == "✓ request-metadata: 5 passed, 0 failed"
    assert verdict.passes  # the capability checks are never expected of a client


def test_the_first_request_alone_leaves_the_retry_a_warning() -> None:
    transcript = Transcript()
    transcript.post("server/discover", headers=VERSION)
    assert "sep-2575-client-retry-supported-version WARNING" in _statuses(
        "request-metadata", transcript
    )


def test_the_last_request_decides_the_retry() -> None:
    transcript = Transcript()
    transcript.post("server/discover", headers=VERSION)
    transcript.post("server/discover", headers=VERSION)
    transcript.post("tools/list", _meta(**{"io.modelcontextprotocol/protocolVersion": "2025-11-25"}),
                    headers={"mcp-protocol-version": "2025-11-25"})  # fmt: skip
    assert "sep-2575-client-retry-supported-version WARNING" in _statuses(
        "request-metadata", transcript
    )


def test_the_worst_verdict_per_check_stays() -> None:
    transcript = Transcript()
    transcript.post("server/discover", headers=VERSION)
    transcript.post("tools/list")  # no version header
    transcript.post("tools/list", headers=VERSION)
    statuses = _statuses("request-metadata", transcript)
    assert "sep-2575-http-client-sends-version-header FAILURE" in statuses
    # the header-less request could not be compared: SKIPPED ranks below SUCCESS
    assert "sep-2575-http-version-header-matches-meta SUCCESS" in statuses


@pytest.mark.parametrize(
    ("params", "headers", "check", "status"),
    [
        (_meta(**{"io.modelcontextprotocol/clientInfo": None}), VERSION,
         "sep-2575-client-sends-client-info", "WARNING"),
        (_meta(**{"io.modelcontextprotocol/clientCapabilities": None}), VERSION,
         "sep-2575-client-populates-meta", "FAILURE"),
        (_meta(), {"mcp-protocol-version": "2025-11-25"},
         "sep-2575-http-version-header-matches-meta", "FAILURE"),
        (_meta(**{"io.modelcontextprotocol/clientCapabilities": {"roots": True}}), VERSION,
         "sep-2575-client-declares-roots-capability", "FAILURE"),
        (_meta(**{"io.modelcontextprotocol/clientCapabilities": {"sampling": []}}), VERSION,
         "sep-2575-client-declares-sampling-capability", "FAILURE"),
    ],
)  # fmt: skip
def test_request_metadata_failures(
    params: dict[str, Any], headers: dict[str, str], check: str, status: str
) -> None:
    transcript = Transcript()
    transcript.post("server/discover", params, headers=headers)
    assert f"{check} {status}" in _statuses("request-metadata", transcript)


def test_no_request_backfills_every_check_as_a_failure() -> None:
    assert _counts("request-metadata", Transcript()) == Counter({"FAILURE": 8})


# -- sep-2322-client-request-state -----------------------------------------------------------

STATE = '{"nonce":"n","originalId":1}'
ASKED = {
    "jsonrpc": "2.0",
    "id": 1,
    "result": {"resultType": "input_required", "inputRequests": {}, "requestState": STATE},
}
CONFIRMED = {"confirm": {"action": "accept", "content": {"confirmed": True}}}


def _tool(name: str, **params: Any) -> dict[str, Any]:
    return {"name": name, "arguments": {}, "_meta": META, **params}


def _mrtr(state: Any = STATE, *, retry_id: Any = None, unrelated: dict[str, Any] | None = None,
          no_state_retry: dict[str, Any] | None = None,
          no_result_type_retry: bool = False) -> Transcript:  # fmt: skip
    transcript = Transcript()
    transcript.post("tools/call", _tool("test_mrtr_echo_state"), path="/mcp", id_=1, answer=ASKED)
    retry = _tool("test_mrtr_echo_state", inputResponses=CONFIRMED)
    if state is not None:
        retry["requestState"] = state
    transcript.post("tools/call", retry, path="/mcp", id_=retry_id)
    transcript.post("tools/call", _tool("test_mrtr_no_state"), path="/mcp")
    transcript.post("tools/call", _tool("test_mrtr_no_state", inputResponses=CONFIRMED,
                                        **(no_state_retry or {})), path="/mcp")  # fmt: skip
    transcript.post("tools/call", _tool("test_mrtr_unrelated", **(unrelated or {})), path="/mcp")
    transcript.post("tools/call", _tool("test_mrtr_no_result_type"), path="/mcp")
    if no_result_type_retry:
        transcript.post("tools/call", _tool("test_mrtr_no_result_type", inputResponses=CONFIRMED),
                        path="/mcp")  # fmt: skip
    return transcript


def test_mrtr_passes_the_echo_and_a_new_id() -> None:
    verdict = scenario_verdict(served("sep-2322-client-request-state"), MODERN, _mrtr().entries)
    assert verdict.line == "✓ sep-2322-client-request-state: 5 passed, 0 failed"
    assert verdict.passes


@pytest.mark.parametrize(
    ("transcript", "failing"),
    [
        (_mrtr(state=STATE + "x"), "sep-2322-client-request-state-echoed"),
        (_mrtr(state=None), "sep-2322-client-request-state-echoed"),
        (_mrtr(retry_id=1), "sep-2322-client-jsonrpc-id-different"),
        (_mrtr(no_state_retry={"requestState": None}), "sep-2322-client-no-state-omitted"),
        (_mrtr(unrelated={"requestState": STATE}), "sep-2322-client-parallel-isolation"),
        (_mrtr(no_result_type_retry=True), "sep-2322-default-result-type-complete"),
    ],
)
def test_mrtr_failures(transcript: Transcript, failing: str) -> None:
    statuses = _statuses("sep-2322-client-request-state", transcript)
    assert f"{failing} FAILURE" in statuses
    assert f"{failing} SUCCESS" not in statuses  # a retry without resultType replaces it


def test_a_retry_id_of_another_type_is_a_different_id() -> None:
    statuses = _statuses("sep-2322-client-request-state", _mrtr(retry_id="1"))
    assert "sep-2322-client-jsonrpc-id-different SUCCESS" in statuses


def test_mrtr_without_calls_backfills_five_failures() -> None:
    assert _counts("sep-2322-client-request-state", Transcript()) == Counter({"FAILURE": 5})


# -- http-standard-headers -------------------------------------------------------------------


def _headed(method: str, name: str | None = None) -> dict[str, str]:
    headers = {**VERSION, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return headers


def test_standard_headers_judge_each_methods_first_request() -> None:
    transcript = Transcript()
    transcript.post("server/discover", headers={})  # answered before the headers are read
    transcript.post("tools/list", headers=_headed("tools/list"))
    transcript.post("tools/list", headers={})  # not the first: not judged
    transcript.post("tools/call", {"name": "my-hyphenated-tool", "_meta": META},
                    headers=_headed("tools/call", "my-hyphenated-tool"))  # fmt: skip
    transcript.post("resources/read", {"uri": "file:///a%20b", "_meta": META},
                    headers=_headed("resources/read", "file:///a%20b"))  # fmt: skip
    counts = _counts("http-standard-headers", transcript)
    assert counts == Counter({"SUCCESS": 5, "SKIPPED": 6})  # 5 methods, prompts/get's name


@pytest.mark.parametrize(
    "headers",
    [{}, _headed("tools/list"), _headed("tools/call", "other"), _headed("TOOLS/CALL", "t")],
)
def test_standard_headers_fail_a_wrong_or_missing_header(headers: dict[str, str]) -> None:
    transcript = Transcript()
    transcript.post("tools/call", {"name": "t", "_meta": META}, headers=headers)
    assert _counts("http-standard-headers", transcript)["FAILURE"] >= 1


# -- http-custom-headers ---------------------------------------------------------------------

ARGUMENTS: list[dict[str, Any]] = served("http-custom-headers").context["toolCalls"]


def _b64(text: str) -> str:
    return f"=?base64?{base64.b64encode(text.encode()).decode()}?="


GOOD = {
    "mcp-param-region": "us-west1",
    "mcp-param-priority": "42",
    "mcp-param-verbose": "false",
    "mcp-param-debug": "true",
    "mcp-param-emptyval": "",
    "mcp-param-method": "test-method",
    "mcp-param-nonascii": _b64("Hello, 世界"),
    "mcp-param-whitespace": _b64(" padded "),
    "mcp-param-leadingspace": _b64(" us-west1"),
    "mcp-param-trailingspace": _b64("us-west1 "),
    "mcp-param-internalspace": "us west 1",
    "mcp-param-controlchar": _b64("line1\nline2"),
    "mcp-param-crlf": _b64("line1\r\nline2"),
    "mcp-param-tab": _b64("\tindented"),
}


def _custom(headers: dict[str, str], null_headers: dict[str, str] | None = None) -> Transcript:
    transcript = Transcript()
    for call, sent in zip(ARGUMENTS, (headers, null_headers or {}), strict=True):
        transcript.post("tools/call", {**call, "_meta": META}, headers=sent)
    return transcript


def test_custom_headers_pass_every_mirrored_argument() -> None:
    verdict = scenario_verdict(served("http-custom-headers"), MODERN, _custom(GOOD).entries)
    assert verdict.line == "✓ http-custom-headers: 18 passed, 0 failed"


@pytest.mark.parametrize(
    ("change", "failing"),
    [
        ({"mcp-param-whitespace": " padded "}, "sep-2243-client-base64-unsafe"),
        ({"mcp-param-priority": "=?base64?NDI=?="}, None),  # Base64 of "42": allowed
        ({"mcp-param-priority": "42.0"}, None),  # compared as numbers
        ({"mcp-param-priority": "0x2A"}, None),  # Number("0x2A") is 42
        ({"mcp-param-priority": "=?base64?NDI?="}, None),  # Node decodes unpadded Base64
        ({"mcp-param-priority": "forty-two"}, "sep-2243-client-encode-values"),
        ({"mcp-param-priority": "43"}, "sep-2243-client-encode-values"),
        ({"mcp-param-verbose": "False"}, "sep-2243-client-encode-values"),
        ({"mcp-param-region": "us-east1"}, "sep-2243-client-mirrors-designated-params"),
        ({"mcp-param-query": "SELECT"}, "sep-2243-client-mirrors-designated-params"),
        ({"mcp-param-floatval": "3.14159"}, "sep-2243-client-mirrors-designated-params"),
    ],
)
def test_custom_headers_judge_each_value(change: dict[str, str], failing: str | None) -> None:
    statuses = _statuses("http-custom-headers", _custom({**GOOD, **change}))
    failed = {s.split()[0] for s in statuses if s.endswith("FAILURE")}
    assert failed == ({failing} if failing else set())


def test_a_header_for_a_null_argument_fails() -> None:
    transcript = _custom(GOOD, {"mcp-param-verbose": "null"})
    assert "sep-2243-client-omit-null FAILURE" in _statuses("http-custom-headers", transcript)


def test_no_headers_at_all_fail_and_an_uncalled_tool_is_backfilled() -> None:
    transcript = Transcript()
    transcript.post("tools/call", {**ARGUMENTS[0], "_meta": META})
    counts = _counts("http-custom-headers", transcript)
    # supports, 6 + 8 missing headers, and the null tool never called; the two
    # unannotated parameters pass
    assert counts == Counter({"FAILURE": 16, "SUCCESS": 2})


# -- http-invalid-tool-headers ---------------------------------------------------------------


def test_invalid_tool_headers_pass_a_client_that_calls_only_the_valid_tool() -> None:
    transcript = Transcript()
    transcript.post("tools/list")
    transcript.post("tools/call", {"name": "valid_tool", "arguments": {"region": "x"}})
    verdict = scenario_verdict(served("http-invalid-tool-headers"), MODERN, transcript.entries)
    assert verdict.line == "✓ http-invalid-tool-headers: 12 passed, 0 failed"


def test_calling_an_invalid_tool_fails_its_rule_and_no_listing_fails_the_gate() -> None:
    transcript = Transcript()
    transcript.post("tools/call", {"name": "invalid_number_header", "arguments": {"score": 1}})
    statuses = _statuses("http-invalid-tool-headers", transcript)
    assert "sep-2243-invalid-tool-tools-list-gate FAILURE" in statuses
    assert "sep-2243-client-reject-invalid-tool FAILURE" in statuses
    assert statuses.count("sep-2243-x-mcp-header-primitive-only FAILURE") == 1
    assert statuses.count("sep-2243-x-mcp-header-primitive-only SUCCESS") == 3
