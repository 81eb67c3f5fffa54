"""The official runner's verdicts on a client scenario, worked out from the mock's transcript.

For each check id a served scenario emits (`_client_checks.SERVED`), the runner's own rule
(0.2.0-alpha.12, read from its dist/index.js; the scenario classes are named in
tools/conformance_client_scripts.py) applied to what the mock recorded: the HTTP requests as
they came (`http_request` entries: method, path, headers, body, arrival time) and the ends
of the streams the mock closed (`http_end`). A refused request counts as the runner's
server would have counted it: its servers refuse almost nothing, so what the client sent is
what they saw. Each verdict cites the transcript entries it rests on.

Then the scenario in the runner's three senses (its code has three pass rules, see
docs/conformance-clients.md): `runner_line` as its `--requirements` / `--suite` summary
line counts it (no FAILURE, no WARNING), `runner_scenario` as `client --scenario` does (also
no time-out, exit 0 unless the scenario allows a client error), and `tier` as tier-check
does (no FAILURE and at least one SUCCESS). A scenario passes *here* only when its line
passes and every id expected of it was judged (a scenario that judged nothing passes the
runner's line, never this).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness.official._client_checks import (
    SCORED_CLIENT,
    SERVED,
    ClientScenario,
)
from harness.protocol import REVISIONS, validate

__all__ = [
    "JUDGED",
    "OfficialStatus",
    "OfficialVerdict",
    "ScenarioVerdict",
    "TierFigure",
    "official_verdicts",
    "scenario_verdict",
    "tier_figure",
]

OfficialStatus = Literal["SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO"]
JUDGED: tuple[OfficialStatus, ...] = ("SUCCESS", "FAILURE", "WARNING")
"""The statuses that judge: the runner's INFO is a log line, SKIPPED a rule that did not apply."""

Entry = Mapping[str, Any]

# The versions the runner's servers know (`Ee`), and those initialize accepts (`Te`).
_KNOWN_VERSIONS = ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
_INITIALIZE_VERSIONS = ("2025-06-18", "2025-11-25", "2026-07-28")
_EARLY_TOLERANCE = 0.450  # sse-retry: the retry field (500 ms) less its 50 ms tolerance
ELICITATION_ID = "srv-elicit"  # the id the served script gives its elicitation request


@dataclass(frozen=True)
class OfficialVerdict:
    id: str
    status: OfficialStatus
    reason: str
    evidence: tuple[int, ...] = ()
    """The `seq` of the transcript entries it rests on."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "reason": self.reason,
            "evidence": list(self.evidence),
        }


# -- reading the transcript as the runner's servers saw it -------------------------------------


_UNPARSED = object()


@dataclass(frozen=True)
class _Post:
    entry: Entry
    body: Any  # the decoded JSON body, or _UNPARSED

    @property
    def seq(self) -> int:
        return int(self.entry.get("seq", -1))

    @property
    def t(self) -> float:
        return float(self.entry.get("t", 0.0))

    def header(self, name: str) -> str | None:
        headers = self.entry.get("headers") or {}
        value = headers.get(name, headers.get(name.lower()))
        return value if isinstance(value, str) else None

    @property
    def method(self) -> Any:
        return self.body.get("method") if isinstance(self.body, dict) else None


def _requests(entries: Iterable[Entry], method: str) -> list[Entry]:
    return [e for e in entries if e.get("kind") == "http_request" and e.get("method") == method]


def _posts(
    entries: Iterable[Entry], *, path: str | None = None, json_only: bool = False
) -> list[_Post]:
    """The POSTs (to `path`, any when None), bodies decoded; `json_only`: only those an
    express.json() server parses (a JSON content type), as its `/mcp` routes see them."""
    found = []
    for entry in _requests(entries, "POST"):
        if path is not None and entry.get("path") != path:
            continue
        headers = entry.get("headers") or {}
        if json_only and "json" not in str(headers.get("content-type", "")).lower():
            continue
        try:
            body: Any = json.loads(str(entry.get("body", "")))
        except ValueError:
            body = _UNPARSED
        found.append(_Post(entry, body))
    return found


def _truthy(value: Any) -> bool:
    """JavaScript's truthiness of a JSON value."""
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (None, False, 0, "")


def _is_number(value: Any) -> bool:
    """`typeof value == "number"` for a JSON value (a boolean is none)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# -- the rules, one function per scenario --------------------------------------------------------


def official_verdicts(
    scenario: str, revision: str, entries: Sequence[Entry]
) -> list[OfficialVerdict]:
    """What the runner would emit for `scenario` at `revision` from this traffic, in its
    order, its log lines (INFO) left out."""
    rules = {
        "initialize": _initialize,
        "tools_call": _tools_call,
        "elicitation-sep1034-client-defaults": _elicitation_defaults,
        "sse-retry": _sse_retry,
    }
    # The 2026-07-28 scenarios' rules live beside these and read the transcript through
    # them: imported here, when the table is built, so that neither module imports the
    # other at load.
    from harness.official._parity_stateless import RULES_STATELESS

    rules.update(RULES_STATELESS)
    from harness.official._auth_parity import AUTH_RULES  # the same, for authorization

    rules.update(AUTH_RULES)
    from harness.official._auth_parity_modern import AUTH_RULES_MODERN  # 2026-07-28 only

    rules.update(AUTH_RULES_MODERN)
    if scenario not in rules:
        raise ValueError(f"no parity rules for the client scenario {scenario!r}")
    return list(rules[scenario](revision, entries))


def _initialize(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    # Ne.handleRequest: every path and method with a JSON body; an initialize is checked.
    for post in _posts(entries):
        if post.method != "initialize":
            continue
        params = post.body.get("params")
        params = params if isinstance(params, dict) else {}
        info = params.get("clientInfo")
        info = info if isinstance(info, dict) else {}
        version = params.get("protocolVersion")
        problems = []
        if not _truthy(version):
            problems.append("Protocol version not provided")
        if not (isinstance(version, str) and version in _INITIALIZE_VERSIONS):
            problems.append(f"Version mismatch: expected 2025-11-25, got {version!r}")
        if not _truthy(info.get("name")):
            problems.append("Client name missing")
        if not _truthy(info.get("version")):
            problems.append("Client version missing")
        yield OfficialVerdict(
            "mcp-client-initialization",
            "FAILURE" if problems else "SUCCESS",
            "; ".join(problems)
            or f"initialize offered {version} with clientInfo {info.get('name')!r} "
            f"{info.get('version')!r}",
            (post.seq,),
        )


def _tools_call(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    stateless = revision == "2026-07-28"
    posts = _posts(entries, path="/mcp", json_only=True)
    # `recorded`: every body with a method, refused or not, but initialize and
    # notifications/initialized (stateful) or server/discover (stateless).
    skipped = ("server/discover",) if stateless else ("initialize", "notifications/initialized")
    recorded = [p for p in posts if _truthy(p.method) and p.method not in skipped]
    call = next((p for p in recorded if p.method == "tools/call"), None)
    arguments = call.body.get("params") if call is not None else None
    arguments = arguments.get("arguments") if isinstance(arguments, dict) else None
    arguments = arguments if isinstance(arguments, dict) else {}
    numbers = call is not None and _is_number(arguments.get("a")) and _is_number(arguments.get("b"))
    if call is None:
        reason = "Tool was not called by client"
    elif numbers:
        reason = f"the first tools/call had a={arguments['a']!r} and b={arguments['b']!r}"
    else:
        reason = (
            f"the first tools/call had a={arguments.get('a')!r} and b={arguments.get('b')!r}, "
            "not two numbers"
        )
    yield OfficialVerdict(
        "tool-add-numbers",
        "SUCCESS" if numbers else "FAILURE",
        reason,
        (call.seq,) if call is not None else (),
    )
    yield from _wire_schema(revision, posts, stateless=stateless)


def _wire_schema(
    revision: str, posts: Sequence[_Post], *, stateless: bool
) -> Iterator[OfficialVerdict]:
    """`wire-schema-valid`: emitted when the server observed any message (a JSON body
    posted to /mcp, or a result of its own, which needs one)."""
    bodies = [p for p in posts if p.body is not _UNPARSED]
    if not bodies:
        return
    invalid: list[tuple[_Post, str, str]] = []
    for post in bodies:
        version = (
            revision
            if stateless
            else _header_version(post.header("mcp-protocol-version"), revision)
        )
        problems = _schema_problems(post.body, version)
        if problems:
            invalid.append((post, version, problems))
    if invalid:
        reason = "; ".join(
            f"{p.method or 'a message'} (spec {v}): {why}" for p, v, why in invalid[:3]
        )
        yield OfficialVerdict(
            "wire-schema-valid", "FAILURE", reason, tuple(p.seq for p, _, _ in invalid)
        )
    else:
        yield OfficialVerdict(
            "wire-schema-valid",
            "SUCCESS",
            f"{len(bodies)} message(s) the client posted are valid for their version",
            tuple(p.seq for p in bodies),
        )


def _header_version(header: str | None, revision: str) -> str:
    if header is None:
        return "2025-03-26"
    return header if header in _KNOWN_VERSIONS else revision


def _schema_problems(body: Any, version: str) -> str:
    """Why the body is invalid at `version` for the runner's validator ("" if valid). Its
    validator takes a method it does not know as a plain JSON-RPC request; so does this."""
    if version not in REVISIONS:
        return ""
    if not isinstance(body, (dict, list)):
        return "JSONRPCMessage: not a valid JSON-RPC request, notification, or response"
    violations = [
        v
        for v in validate(body, version, "client")
        if not (v.pointer == "/method" and "not a" in v.reason)
    ]
    return "; ".join(str(v) for v in violations[:3])


_FIELDS = (
    ("string", "name", lambda v: isinstance(v, str), "string"),
    ("integer", "age", _is_number, "number"),
    ("number", "score", _is_number, "number"),
    ("enum", "status", lambda v: isinstance(v, str), "string"),
    ("boolean", "verified", lambda v: isinstance(v, bool), "boolean"),
)
_ENUM = ("active", "inactive", "pending")
_ACTIONS = ("accept", "decline", "cancel")


def _elicitation_defaults(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    # pn: the tool's handler asks, then judges the answer: a failed request or any action
    # but accept is `-general`; an accepted one, each field. getChecks backfills the fields.
    answer = next(
        (
            p
            for p in _posts(entries, path="/mcp")
            if isinstance(p.body, dict)
            and p.body.get("id") == ELICITATION_ID
            and "method" not in p.body
            and ("result" in p.body or "error" in p.body)
        ),
        None,
    )
    if answer is not None:
        result = answer.body.get("result")
        failed = _elicitation_failure(answer.body)
        if failed:
            yield OfficialVerdict(
                "client-elicitation-sep1034-general", "FAILURE", failed, (answer.seq,)
            )
        elif result.get("action") != "accept":
            yield OfficialVerdict(
                "client-elicitation-sep1034-general",
                "FAILURE",
                f"Expected action 'accept', got {result.get('action')!r}",
                (answer.seq,),
            )
        else:
            content = result.get("content")
            content = content if isinstance(content, dict) else {}
            for kind, name, typed, shown in _FIELDS:
                yield _field_verdict(kind, name, typed, shown, content, answer.seq)
            return
    why = "the elicitation was never answered" if answer is None else "it was not accepted"
    for kind, *_ in _FIELDS:
        yield OfficialVerdict(
            f"client-elicitation-sep1034-{kind}-default",
            "FAILURE",
            f"Tool was not called by client, or {why} (the runner backfills a FAILURE)",
            (answer.seq,) if answer is not None else (),
        )


def _elicitation_failure(body: Mapping[str, Any]) -> str:
    """Why the server's request failed: an error answer, or a result the SDK's
    ElicitResult schema rejects ("" if it succeeded)."""
    if "error" in body:
        error = body.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        return f"Elicitation failed: {message}"
    result = body.get("result")
    if not isinstance(result, dict) or result.get("action") not in _ACTIONS:
        return f"Elicitation failed: the answer is no ElicitResult: {json.dumps(result)[:200]}"
    content = result.get("content")
    if content is not None and not (
        isinstance(content, dict)
        and all(
            isinstance(v, (str, int, float))
            or (isinstance(v, list) and all(isinstance(i, str) for i in v))
            for v in content.values()
        )
    ):
        return (
            f"Elicitation failed: content is no record of primitives: {json.dumps(content)[:200]}"
        )
    return ""


def _field_verdict(
    kind: str, name: str, typed: Any, shown: str, content: Mapping[str, Any], seq: int
) -> OfficialVerdict:
    check = f"client-elicitation-sep1034-{kind}-default"
    if name not in content:
        return OfficialVerdict(check, "FAILURE", f'Field "{name}" missing', (seq,))
    value = content[name]
    if not typed(value):
        return OfficialVerdict(
            check, "FAILURE", f'Expected {shown} for "{name}", got {json.dumps(value)}', (seq,)
        )
    if kind == "enum" and value not in _ENUM:
        return OfficialVerdict(
            check, "FAILURE", f'Value "{value}" is not a valid enum member', (seq,)
        )
    return OfficialVerdict(check, "SUCCESS", f"{name} = {json.dumps(value)}", (seq,))


def _sse_retry(revision: str, entries: Sequence[Entry]) -> Iterator[OfficialVerdict]:
    # hn: every GET (any path) is counted, the last one's arrival kept; a tools/call's
    # stream is closed, the close time kept (the last call's).
    gets = _requests(entries, "GET")
    if not gets:
        yield OfficialVerdict(
            "client-sse-graceful-reconnect",
            "FAILURE",
            "Client did not attempt GET reconnection after stream closure",
        )
        return
    yield OfficialVerdict(
        "client-sse-graceful-reconnect",
        "SUCCESS",
        f"{len(gets)} GET request(s)",
        tuple(int(g["seq"]) for g in gets),
    )
    calls = {p.entry.get("request"): p for p in _posts(entries) if p.method == "tools/call"}
    closes = [
        e
        for e in entries
        if e.get("kind") == "http_end" and e.get("how") == "closed" and e.get("request") in calls
    ]
    last_get = gets[-1]
    if closes:
        close = closes[-1]
        delay = float(last_get["t"]) - float(close["t"])
        early = delay < _EARLY_TOLERANCE
        yield OfficialVerdict(
            "client-sse-retry-timing",
            "FAILURE" if early else "SUCCESS",
            f"the last GET came {delay * 1000:.0f} ms after the tool stream closed"
            + (" (sooner than 450 ms: retry was 500 ms)" if early else ""),
            (int(close["seq"]), int(last_get["seq"])),
        )
    else:
        yield OfficialVerdict(
            "client-sse-retry-timing",
            "INFO",
            "Could not measure timing - tool stream close time or GET reconnection time "
            "not recorded",
        )
    resumed = [g for g in gets if _truthy((g.get("headers") or {}).get("last-event-id"))]
    yield OfficialVerdict(
        "client-sse-last-event-id",
        "SUCCESS" if resumed else "WARNING",
        f"Last-Event-ID {(resumed[0].get('headers') or {}).get('last-event-id')!r}"
        if resumed
        else "Client did not send Last-Event-ID header on reconnection (a SHOULD)",
        tuple(int(g["seq"]) for g in (resumed or gets)),
    )


# -- the scenario, in the runner's terms and ours ------------------------------------------------


@dataclass(frozen=True)
class ScenarioVerdict:
    scenario: ClientScenario
    revision: str
    verdicts: tuple[OfficialVerdict, ...]
    timed_out: bool = False
    exit_code: int | None = 0
    hung: bool = False
    harness_fault: str | None = None
    """The harness's own failure (the mock's): nothing is judged."""

    @property
    def name(self) -> str:
        return self.scenario.name

    @property
    def expected(self) -> tuple[str, ...]:
        return self.scenario.expected(self.revision)

    @property
    def judged(self) -> tuple[str, ...]:
        """The expected ids that got a verdict that judges."""
        seen = {v.id for v in self.verdicts if v.status in JUDGED}
        return tuple(i for i in self.expected if i in seen)

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(i for i in self.expected if i not in self.judged)

    def count(self, status: OfficialStatus) -> int:
        return sum(1 for v in self.verdicts if v.status == status)

    @property
    def runner_line(self) -> bool:
        """Its `--requirements` / `--suite` summary line: no FAILURE and no WARNING (the
        time-out and the exit code do not count there)."""
        return self.count("FAILURE") == 0 and self.count("WARNING") == 0

    @property
    def runner_scenario(self) -> bool:
        """`client --scenario`: the line, no time-out, and exit 0 unless the scenario
        allows a client error."""
        exited = self.exit_code == 0 or self.scenario.allow_client_error
        return self.runner_line and not self.timed_out and exited

    @property
    def tier(self) -> bool:
        """tier-check's count: no FAILURE and at least one SUCCESS (WARNINGs ignored)."""
        return self.count("FAILURE") == 0 and self.count("SUCCESS") > 0

    @property
    def passes(self) -> bool:
        """Here: the runner's line passes, and every expected id was judged; never for a
        run that hung or that the harness could not carry out."""
        if self.hung or self.harness_fault is not None:
            return False
        return self.runner_line and not self.missing

    @property
    def line(self) -> str:
        """The runner's summary line for it, as it prints it."""
        mark = "✓" if self.runner_line else "✗"
        warnings = self.count("WARNING")
        shown = f", {warnings} warnings" if warnings else ""
        return (
            f"{mark} {self.name}: {self.count('SUCCESS')} passed, "
            f"{self.count('FAILURE')} failed{shown}"
        )

    @property
    def outcome(self) -> str:
        """One line: the verdict here, and why."""
        if self.harness_fault is not None:
            return f"not judged: the harness failed: {self.harness_fault}"
        if self.hung:
            return "hung: the client did not exit after the time-out's SIGTERM (killed)"
        judged = f"{len(self.judged)} of {len(self.expected)} expected ids judged"
        if self.missing:
            judged += f" (never judged: {', '.join(self.missing)})"
        if not self.runner_line:
            return f"failed: {judged}"
        return f"not passed: {judged}" if self.missing else f"passed: {judged}"

    @property
    def tier_outcome(self) -> str:
        """For the tier figure: passed, failed, or hung (not judged, counted as not passed)."""
        if self.hung or self.harness_fault is not None:
            return "hung"
        return "passed" if self.tier else "failed"

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.name,
            "revision": self.revision,
            "verdicts": [v.to_json() for v in self.verdicts],
            "expected": list(self.expected),
            "judged": list(self.judged),
            "runner_line": self.runner_line,
            "runner_scenario": self.runner_scenario,
            "tier": self.tier,
            "passes": self.passes,
            "timed_out": self.timed_out,
            "exit_code": self.exit_code,
            "hung": self.hung,
            "outcome": self.outcome,
        }


def scenario_verdict(
    scenario: ClientScenario,
    revision: str,
    entries: Sequence[Entry],
    *,
    timed_out: bool = False,
    exit_code: int | None = 0,
    hung: bool = False,
) -> ScenarioVerdict:
    """The scenario's verdict from its run's transcript and how the client ended. A run
    the mock broke off (a mock error) or that hung is not judged: no verdicts."""
    mock_errors = [e for e in entries if e.get("kind") == "mock_error"]
    fault = None
    if mock_errors:
        first = mock_errors[0]
        fault = f"mock error at {first.get('where')}: {first.get('reason')}"
    verdicts = () if hung or fault else tuple(official_verdicts(scenario.name, revision, entries))
    return ScenarioVerdict(
        scenario,
        revision,
        verdicts,
        timed_out=timed_out,
        exit_code=exit_code,
        hung=hung,
        harness_fault=fault,
    )


@dataclass(frozen=True)
class TierFigure:
    revision: str
    passed: tuple[str, ...]
    """Scored scenarios that pass tier-check's rule here."""
    failed: tuple[str, ...]
    hung: tuple[str, ...]
    """Scored scenarios whose run hung, or that the harness could not carry out."""
    not_served: tuple[str, ...]
    """Scored scenarios mcp-testbench does not serve yet: not run, counted as not passed."""
    not_run: tuple[str, ...]
    """Served, but left out of this run (a selection)."""

    @property
    def scored(self) -> int:
        return len(SCORED_CLIENT[self.revision])

    @property
    def line(self) -> str:
        parts = [f"{len(self.passed)} of {self.scored} scored client scenarios at {self.revision}"]
        if self.not_served:
            parts.append(f"{len(self.not_served)} not served here (not run, not counted as passed)")
        if self.not_run:
            parts.append(f"{len(self.not_run)} served but not run (not counted as passed)")
        if self.hung:
            parts.append(f"{len(self.hung)} hung or not judged")
        return "; ".join(parts)


def tier_figure(revision: str, outcomes: Mapping[str, str]) -> TierFigure:
    """tier-check's figure for one revision's scored set, from this run's outcomes by
    scenario (`ScenarioVerdict.tier_outcome`: passed, failed, hung): a scored scenario
    passes with no FAILURE and at least one SUCCESS; one with no outcome (not served
    here, or not run) is not passed, as the runner counts a scored scenario without
    checks.json."""
    scored = SCORED_CLIENT[revision]
    served = {s.name for s in SERVED if revision in s.revisions}
    passed: list[str] = []
    failed: list[str] = []
    hung: list[str] = []
    not_served: list[str] = []
    not_run: list[str] = []
    for name in scored:
        outcome = outcomes.get(name)
        if outcome is None:
            (not_run if name in served else not_served).append(name)
        else:
            {"passed": passed, "failed": failed}.get(outcome, hung).append(name)
    return TierFigure(
        revision, tuple(passed), tuple(failed), tuple(hung), tuple(not_served), tuple(not_run)
    )
