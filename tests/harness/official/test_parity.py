"""The runner's rules for the served client scenarios, each on made-up transcripts.

Every rule is the one of @modelcontextprotocol/conformance 0.2.0-alpha.12 (its
dist/index.js); each test names the case of that code it pins: the backfills, the first
tools/call, the last GET, the header's schema version, JavaScript's truthiness.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.official import (
    SCORED_CLIENT,
    SERVED,
    official_verdicts,
    scenario_verdict,
    served_scenario,
    tier_figure,
)

Entry = dict[str, Any]


class Transcript:
    """Builds transcript entries as the HTTP mock records them."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.requests = 0

    def _add(self, kind: str, t: float, **members: Any) -> Entry:
        entry = {"seq": len(self.entries), "t": t, "kind": kind, **members}
        self.entries.append(entry)
        return entry

    def post(
        self,
        body: Any,
        t: float = 0.0,
        *,
        path: str = "/mcp",
        headers: dict[str, str] | None = None,
        raw: str | None = None,
    ) -> int:
        self.requests += 1
        sent = {"content-type": "application/json", **(headers or {})}
        text = raw if raw is not None else json.dumps(body)
        self._add("http_request", t, request=self.requests, method="POST", path=path,
                  headers=sent, body=text)  # fmt: skip
        return self.requests

    def get(self, t: float, *, last_event_id: str | None = None, path: str = "/") -> int:
        self.requests += 1
        headers = {"accept": "text/event-stream"}
        if last_event_id is not None:
            headers["last-event-id"] = last_event_id
        self._add("http_request", t, request=self.requests, method="GET", path=path,
                  headers=headers, body="")  # fmt: skip
        return self.requests

    def closed(self, request: int, t: float) -> None:
        self._add("http_end", t, request=request, stream="s1", how="closed")


def _initialize(version: Any = "2025-11-25", name: Any = "c", client_version: Any = "1") -> Any:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": name, "version": client_version},
        },
    }


def _call(a: Any, b: Any, name: str = "add_numbers", id_: int = 2, **meta: Any) -> Any:
    params: dict[str, Any] = {"name": name, "arguments": {"a": a, "b": b}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def _statuses(scenario: str, transcript: Transcript, revision: str = "2025-11-25") -> list[str]:
    return [f"{v.id} {v.status}" for v in official_verdicts(scenario, revision, transcript.entries)]


# -- initialize ------------------------------------------------------------------------------


def test_initialize_without_an_initialize_emits_nothing() -> None:
    transcript = Transcript()
    transcript.post({"jsonrpc": "2.0", "id": 1, "method": "ping"}, path="/")
    assert _statuses("initialize", transcript) == []
    verdict = scenario_verdict(served("initialize"), "2025-11-25", transcript.entries)
    # The runner's --requirements line passes a scenario that judged nothing; here it does not.
    assert verdict.runner_line
    assert not verdict.tier
    assert not verdict.passes
    assert verdict.missing == ("mcp-client-initialization",)
    assert verdict.line == "✓ initialize: 0 passed, 0 failed"


@pytest.mark.parametrize(
    ("initialize", "status"),
    [
        (_initialize(), "SUCCESS"),
        (_initialize("2026-07-28"), "SUCCESS"),  # theirs accepts it in an initialize
        (_initialize("2025-06-18"), "SUCCESS"),
        (_initialize("2025-03-26"), "FAILURE"),
        (_initialize(None), "FAILURE"),
        (_initialize(name=""), "FAILURE"),  # JavaScript: "" is falsy
        (_initialize(client_version=0), "FAILURE"),
        (_initialize(client_version=[]), "SUCCESS"),  # ... and [] is truthy
    ],
)
def test_initialize_judges_the_version_and_the_client_info(initialize: Any, status: str) -> None:
    transcript = Transcript()
    transcript.post(initialize, path="/")
    assert _statuses("initialize", transcript) == [f"mcp-client-initialization {status}"]


def test_each_initialize_is_judged() -> None:
    transcript = Transcript()
    transcript.post(_initialize(), path="/")
    transcript.post(_initialize("1999-01-01"), path="/anywhere")
    assert _statuses("initialize", transcript) == [
        "mcp-client-initialization SUCCESS",
        "mcp-client-initialization FAILURE",
    ]


# -- tools_call ------------------------------------------------------------------------------


def test_the_first_tools_call_decides_whatever_its_tool() -> None:
    transcript = Transcript()
    transcript.post(_initialize())
    transcript.post(_call(1, 2, name="other"))
    transcript.post(_call("1", "2"))
    assert _statuses("tools_call", transcript)[0] == "tool-add-numbers SUCCESS"


@pytest.mark.parametrize(
    ("a", "b", "status"),
    [(5, 3, "SUCCESS"), (2.5, -1, "SUCCESS"), ("5", 3, "FAILURE"), (True, 3, "FAILURE"),
     (None, 3, "FAILURE")],
)  # fmt: skip
def test_add_numbers_wants_two_json_numbers(a: Any, b: Any, status: str) -> None:
    transcript = Transcript()
    transcript.post(_call(a, b))
    assert _statuses("tools_call", transcript)[0] == f"tool-add-numbers {status}"


def test_no_call_is_a_failure_and_other_paths_are_not_seen() -> None:
    transcript = Transcript()
    transcript.post(_call(1, 2), path="/other")  # express: 404, never recorded
    verdicts = official_verdicts("tools_call", "2025-11-25", transcript.entries)
    assert [(v.id, v.status) for v in verdicts] == [("tool-add-numbers", "FAILURE")]
    assert verdicts[0].reason == "Tool was not called by client"


def test_wire_schema_validates_at_the_header_version() -> None:
    transcript = Transcript()
    version = {"mcp-protocol-version": "2025-11-25"}
    transcript.post(_initialize())
    transcript.post(_call(1, 2), headers=version)
    transcript.post({"jsonrpc": "2.0", "id": 9, "method": "vendor/extension"}, headers=version)
    assert _statuses("tools_call", transcript)[1] == "wire-schema-valid SUCCESS"
    # A call whose name is no string is invalid at any version.
    transcript.post({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 7}})
    assert _statuses("tools_call", transcript)[1] == "wire-schema-valid FAILURE"


def test_wire_schema_is_silent_without_a_json_body() -> None:
    transcript = Transcript()
    transcript.post(None, raw="not json", headers={"content-type": "text/plain"})
    assert _statuses("tools_call", transcript) == ["tool-add-numbers FAILURE"]


def test_at_2026_discover_is_not_recorded_and_the_run_version_validates() -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    transcript = Transcript()
    transcript.post(
        {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    )
    transcript.post(_call(1, 2, **meta))
    assert _statuses("tools_call", transcript, "2026-07-28") == [
        "tool-add-numbers SUCCESS",
        "wire-schema-valid SUCCESS",
    ]
    bare = Transcript()
    bare.post(_call(1, 2))  # no _meta: invalid at 2026-07-28, whatever the header says
    assert _statuses("tools_call", bare, "2026-07-28")[1] == "wire-schema-valid FAILURE"


# -- elicitation-sep1034-client-defaults -----------------------------------------------------

DEFAULTS = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}
FIELDS = ("string", "integer", "number", "enum", "boolean")


def _answer(result: Any = None, error: Any = None) -> Any:
    answer: dict[str, Any] = {"jsonrpc": "2.0", "id": "srv-elicit"}
    if error is not None:
        answer["error"] = error
    else:
        answer["result"] = result
    return answer


def _elicited(answer: Any | None) -> list[str]:
    transcript = Transcript()
    transcript.post({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                     "params": {"name": "test_client_elicitation_defaults"}})  # fmt: skip
    if answer is not None:
        transcript.post(answer)
    return _statuses("elicitation-sep1034-client-defaults", transcript)


def test_accepted_defaults_pass_every_field() -> None:
    assert _elicited(_answer({"action": "accept", "content": DEFAULTS})) == [
        f"client-elicitation-sep1034-{kind}-default SUCCESS" for kind in FIELDS
    ]


@pytest.mark.parametrize(
    ("change", "failing"),
    [
        ({"age": "30"}, "integer"),
        ({"age": True}, "integer"),
        ({"score": "95.5"}, "number"),
        ({"status": "unknown"}, "enum"),
        ({"verified": "true"}, "boolean"),
        ({"name": 1}, "string"),
    ],
)
def test_each_field_must_have_its_type(change: dict[str, Any], failing: str) -> None:
    statuses = _elicited(_answer({"action": "accept", "content": {**DEFAULTS, **change}}))
    assert [s for s in statuses if s.endswith("FAILURE")] == [
        f"client-elicitation-sep1034-{failing}-default FAILURE"
    ]


def test_any_value_of_the_type_passes_not_only_the_default() -> None:
    statuses = _elicited(_answer({"action": "accept", "content": {**DEFAULTS, "name": "x"}}))
    assert all(s.endswith("SUCCESS") for s in statuses)


def test_a_content_the_sdk_schema_rejects_fails_in_general() -> None:
    # The runner's SDK takes a null content as none, and no null inside it.
    statuses = _elicited(_answer({"action": "accept", "content": {**DEFAULTS, "score": None}}))
    assert statuses[0] == "client-elicitation-sep1034-general FAILURE"
    assert _elicited(_answer({"action": "accept", "content": None}))[0] == (
        "client-elicitation-sep1034-string-default FAILURE"
    )


def test_a_missing_field_fails() -> None:
    content = {k: v for k, v in DEFAULTS.items() if k != "verified"}
    assert _elicited(_answer({"action": "accept", "content": content}))[-1] == (
        "client-elicitation-sep1034-boolean-default FAILURE"
    )


@pytest.mark.parametrize(
    "answer",
    [
        _answer({"action": "decline"}),
        _answer(error={"code": -32601, "message": "Method not found"}),
        _answer({"action": "maybe"}),
    ],
)
def test_an_answer_that_is_no_acceptance_fails_in_general_and_every_field(answer: Any) -> None:
    assert _elicited(answer) == [
        "client-elicitation-sep1034-general FAILURE",
        *(f"client-elicitation-sep1034-{kind}-default FAILURE" for kind in FIELDS),
    ]


def test_no_answer_backfills_the_fields_only() -> None:
    assert _elicited(None) == [
        f"client-elicitation-sep1034-{kind}-default FAILURE" for kind in FIELDS
    ]


# -- sse-retry -------------------------------------------------------------------------------


def _sse(
    *gets: tuple[float, str | None], call_at: float | None = 1.0, close_at: float = 1.0
) -> Transcript:
    transcript = Transcript()
    transcript.post(_initialize(), path="/")
    events = [("get", t, last) for t, last in gets]
    if call_at is not None:
        events.append(("call", call_at, None))
    for kind, t, last in sorted(events, key=lambda e: e[1]):
        if kind == "get":
            transcript.get(t, last_event_id=last)
        else:
            number = transcript.post(_call(1, 2, name="test_reconnection"), t, path="/")
            transcript.closed(number, close_at)
    return transcript


def test_a_reconnection_after_the_retry_with_last_event_id_passes() -> None:
    assert _statuses("sse-retry", _sse((1.6, "s1-1"))) == [
        "client-sse-graceful-reconnect SUCCESS",
        "client-sse-retry-timing SUCCESS",
        "client-sse-last-event-id SUCCESS",
    ]


def test_no_get_fails_and_judges_nothing_else() -> None:
    transcript = _sse()
    assert _statuses("sse-retry", transcript) == ["client-sse-graceful-reconnect FAILURE"]
    verdict = scenario_verdict(served("sse-retry"), "2025-11-25", transcript.entries)
    assert verdict.missing == ("client-sse-retry-timing", "client-sse-last-event-id")


@pytest.mark.parametrize(
    ("after", "status"), [(0.449, "FAILURE"), (0.451, "SUCCESS"), (30.0, "SUCCESS")]
)
def test_the_timing_fails_under_450_ms_and_has_no_upper_bound(after: float, status: str) -> None:
    assert (
        _statuses("sse-retry", _sse((1.0 + after, "e")))[1] == f"client-sse-retry-timing {status}"
    )


def test_the_last_get_is_timed_even_one_before_the_call() -> None:
    # A standalone GET opened before the call, then never again: a negative delay.
    assert _statuses("sse-retry", _sse((0.5, None), call_at=0.9))[:2] == [
        "client-sse-graceful-reconnect SUCCESS",
        "client-sse-retry-timing FAILURE",
    ]
    # The last GET counts, not the first reconnection.
    assert (
        _statuses("sse-retry", _sse((1.1, None), (2.0, "e")))[1]
        == "client-sse-retry-timing SUCCESS"
    )


def test_without_last_event_id_a_warning_fails_the_line_not_the_tier() -> None:
    transcript = _sse((1.7, None))
    verdict = scenario_verdict(served("sse-retry"), "2025-11-25", transcript.entries)
    assert [v.status for v in verdict.verdicts] == ["SUCCESS", "SUCCESS", "WARNING"]
    assert not verdict.runner_line
    assert verdict.tier
    assert not verdict.passes
    assert verdict.line == "✗ sse-retry: 2 passed, 0 failed, 1 warnings"


def test_without_a_call_the_timing_is_info_and_not_judged() -> None:
    transcript = _sse((1.7, "e"), call_at=None)
    verdict = scenario_verdict(served("sse-retry"), "2025-11-25", transcript.entries)
    assert [v.status for v in verdict.verdicts] == ["SUCCESS", "INFO", "SUCCESS"]
    assert verdict.runner_line
    assert verdict.missing == ("client-sse-retry-timing",)
    assert not verdict.passes


# -- the scenario and the tier figure --------------------------------------------------------


def served(name: str) -> Any:
    scenario = served_scenario(name)
    assert scenario is not None
    return scenario


def test_the_runners_single_scenario_rule_counts_the_time_out_and_exit_code() -> None:
    transcript = Transcript()
    transcript.post(_initialize(), path="/")
    ok = scenario_verdict(served("initialize"), "2025-11-25", transcript.entries)
    assert ok.runner_scenario
    assert ok.passes
    late = scenario_verdict(served("initialize"), "2025-11-25", transcript.entries, timed_out=True)
    assert late.runner_line
    assert not late.runner_scenario
    assert late.passes
    failing = scenario_verdict(served("initialize"), "2025-11-25", transcript.entries, exit_code=1)
    assert failing.runner_line
    assert not failing.runner_scenario


def test_a_hang_or_a_mock_error_judges_nothing() -> None:
    transcript = Transcript()
    transcript.post(_initialize(), path="/")
    hung = scenario_verdict(served("initialize"), "2025-11-25", transcript.entries, hung=True)
    assert hung.verdicts == ()
    assert not hung.passes
    assert hung.tier_outcome == "hung"
    assert hung.outcome.startswith("hung")
    transcript.entries.append(
        {"seq": 9, "t": 1.0, "kind": "mock_error", "where": "x", "reason": "y"}
    )
    broken = scenario_verdict(served("initialize"), "2025-11-25", transcript.entries)
    assert broken.verdicts == ()
    assert broken.harness_fault
    assert broken.tier_outcome == "hung"


def test_the_tier_figure_counts_the_scored_set_and_says_what_was_not_served(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every scored scenario is served now: two are taken out, so that what was not is said.
    import harness.official._parity as parity

    unserved = ("auth/scope-step-up", "auth/scope-retry-limit")
    monkeypatch.setattr(parity, "SERVED", tuple(s for s in SERVED if s.name not in unserved))
    figure = tier_figure(
        "2025-11-25",
        {"initialize": "passed", "tools_call": "failed", "sse-retry": "hung", "ignored": "passed"},
    )
    assert figure.scored == 18 == len(SCORED_CLIENT["2025-11-25"])
    assert figure.passed == ("initialize",)
    assert figure.failed == ("tools_call",)
    assert figure.hung == ("sse-retry",)
    assert figure.not_run[0] == "elicitation-sep1034-client-defaults"
    assert len(figure.not_run) == 13  # and the twelve authorization scenarios served
    assert len(figure.not_served) == 2
    assert figure.line == (
        "1 of 18 scored client scenarios at 2025-11-25; 2 not served here (not run, not "
        "counted as passed); 13 served but not run (not counted as passed); 1 hung or not "
        "judged"
    )
    assert tier_figure("2026-07-28", {}).line.startswith("0 of 32 scored client scenarios")
