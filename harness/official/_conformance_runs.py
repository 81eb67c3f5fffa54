"""One official client scenario run and judged: the runner's verdicts and the suite's.

`conformance_target` says how a served scenario is run (its script, URL path, context);
`judge_conformance_run` takes what the run left (harness.running's `ConformanceRun`) and
gives the scenario's verdict in the runner's terms (`_parity`) beside the verdicts of the
suite's own checks that need nothing but the transcript, marked as ours. A run that hung,
or that the harness could not carry out, judges nothing: its items say so, never a verdict
for the client.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.judging import CATALOGUE, Check, Verdict, blocked, judge, not_applicable
from harness.official._client_checks import ClientScenario
from harness.official._parity import ScenarioVerdict, scenario_verdict
from harness.running import ConformanceRun, ConformanceTarget, Scenario

__all__ = [
    "ConformanceResult",
    "conformance_scenario",
    "conformance_target",
    "judge_conformance_run",
    "our_checks",
]

_SURFACED = (
    "needs what the client surfaced to its caller (results, errors, events); a conformance "
    "client reports nothing to the harness, so only the wire is judged"
)


def conformance_target(scenario: ClientScenario, revision: str) -> ConformanceTarget:
    return ConformanceTarget(
        scenario.name,
        revision,
        scenario.script(revision),
        scenario.url_path,
        scenario.context,
    )


def conformance_scenario(scenario: ClientScenario, revision: str) -> Scenario:
    """The suite's view of the run: a scenario of the served script whose checks are ours."""
    return Scenario(
        f"conformance:{scenario.name}",
        scenario.script(revision),
        checks=tuple(c.id for c in our_checks(scenario, revision)),
        description=f"the official client scenario {scenario.name}, run as the runner runs it",
    )


def our_checks(scenario: ClientScenario, revision: str) -> list[Check]:
    """The suite's checks judged on the scenario's transcript at `revision` (those that
    apply there over HTTP), then those that would need what the client surfaced."""
    import harness.suite  # noqa: F401  (it declares the checks of the catalogue)

    ids = [*scenario.ours, *scenario.surfaced]
    return [CATALOGUE[i] for i in ids if CATALOGUE[i].applies(revision, "http")]


@dataclass(frozen=True)
class ConformanceResult:
    run: ConformanceRun
    official: ScenarioVerdict
    ours: tuple[tuple[Check, Verdict], ...]


def judge_conformance_run(scenario: ClientScenario, run: ConformanceRun) -> ConformanceResult:
    revision = run.target.revision
    official = scenario_verdict(
        scenario,
        revision,
        run.entries,
        timed_out=run.timed_out,
        exit_code=run.exit_code,
        hung=run.hung,
    )
    if run.harness_error is not None:
        official = ScenarioVerdict(
            scenario, revision, (), hung=run.hung, harness_fault=run.harness_error
        )
    suite_run = run.scenario_run(conformance_scenario(scenario, revision))
    ours: list[tuple[Check, Verdict]] = []
    for check in our_checks(scenario, revision):
        if check.id in scenario.surfaced:
            verdict = not_applicable(_SURFACED)
        elif run.hung:
            verdict = blocked(
                "hang",
                "not judged: the client did not exit after the runner's time-out and its "
                "SIGTERM; the harness killed it (a hang, not a verdict)",
            )
        elif official.harness_fault is not None:
            verdict = blocked("harness", f"not judged: {official.harness_fault}")
        else:
            verdict = judge(check, suite_run)
        ours.append((check, verdict))
    return ConformanceResult(run, official, tuple(ours))
