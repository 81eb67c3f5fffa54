"""The fuzzer: Hypothesis draws plans, the harness runs each against the client, the
properties judge the run; a failure is shrunk and saved as a script that replays it.

Each plan is written as a script and run like any scenario (`harness.running.execute`: the
stdio mock, the client's connect and operations, each bounded in time). Every property is
checked on every example. The first property that fails becomes the search's focus: while
Hypothesis shrinks, an example fails only when that property fails again, so the shrunk
script shows that one failure. Identical scripts are run once (their findings are kept), and
past the shrink budget an example never seen before is not run at all and passes: the
search ends with the smallest failing script found so far, and Hypothesis's final replay of
it finds it failing, as before.
"""

from __future__ import annotations

import contextlib
import json
import random
import re
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, note, seed, settings

from harness.clients import McpClient
from harness.fuzzing._plans import CallTool, Plan, plan_of_script, plans, smaller_plans
from harness.fuzzing._properties import PROPERTIES, Property, harness_fault
from harness.running import Scenario, ScenarioRun, Session, execute
from mock_servers import parse_script

__all__ = [
    "DEFAULT_OP_TIMEOUT",
    "DEFAULT_SHRINK_BUDGET",
    "Failure",
    "FuzzReport",
    "fuzz",
    "judge",
    "replay",
    "run_plan",
]

ClientFactory = Callable[[], McpClient]
Findings = dict[str, list[str]]

DEFAULT_OP_TIMEOUT = 5.0
"""Seconds a client has for connecting and for each operation (the harness's bound is twice
that): no plan delays an answer, so a client that needs it has hung."""
DEFAULT_SHRINK_BUDGET = 80
"""Runs of the client spent on shrinking a failure, at most: half for Hypothesis's shrinker,
the rest (and what it left) for the structural pass (`smaller_plans`)."""


def _drive_for(plan: Plan) -> Callable[[Session], Any]:
    async def drive(session: Session) -> None:
        await session.connect()
        for operation in plan.operations:
            if isinstance(operation, CallTool):
                await session.call("call_tool", operation.name, dict(operation.arguments))
            else:
                await session.call("list_tools")

    return drive


def run_plan(
    plan: Plan,
    factory: ClientFactory,
    script_path: Path,
    *,
    op_timeout: float = DEFAULT_OP_TIMEOUT,
) -> ScenarioRun:
    """Write `plan` to `script_path` and run the client against it over stdio."""
    script_path.write_text(plan.to_json_text(), encoding="utf-8")
    scenario = Scenario(
        id=f"fuzz {script_path.stem}",
        script=str(script_path.resolve()),  # absolute: taken as it is, not under fixtures/
        checks=(),
        drive=_drive_for(plan),
        revisions=(plan.revision,),
        transports=("stdio",),
    )
    return execute(scenario, plan.revision, "stdio", factory, op_timeout=op_timeout)


def judge(plan: Plan, run: ScenarioRun, properties: Sequence[Property] = PROPERTIES) -> Findings:
    """What each property found wrong with the run (an empty list: it holds)."""
    return {p.name: p.check(plan, run) for p in properties}


@dataclass
class Failure:
    """A property that failed, with the shrunk plan that shows it and where it was saved."""

    violated: Property
    details: list[str]
    plan: Plan
    script: Path | None = None
    replay_command: str = ""
    serve_command: str = ""
    reproduced: bool | None = None
    """Whether a fresh run of the saved script failed the property again (None: not saved)."""

    @property
    def steps(self) -> int:
        return len(self.plan.to_script()["steps"])


@dataclass
class FuzzReport:
    revision: str
    seed: int
    properties: tuple[Property, ...]
    examples: int = 0
    """Examples run while searching (every property is checked on each)."""
    shrink_runs: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    harness_faults: list[str] = field(default_factory=list)

    @property
    def examples_per_second(self) -> float:
        runs = self.examples + self.shrink_runs
        return runs / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        saved = sum(1 for f in self.failures if f.script is not None)
        return (
            f"fuzz {self.revision} stdio seed {self.seed}: {len(self.properties)} properties "
            f"tried on {self.examples} examples ({self.shrink_runs} more runs shrinking), "
            f"{len(self.failures)} failed, {saved} failures saved, "
            f"{len(self.harness_faults)} harness faults; "
            f"{self.examples_per_second:.1f} examples/s"
        )


class _PropertyFailed(AssertionError):
    pass


@dataclass
class _Search:
    factory: ClientFactory
    properties: tuple[Property, ...]
    folder: Path
    op_timeout: float
    shrink_budget: int
    progress: Callable[[FuzzReport], None] | None
    report: FuzzReport
    started: float = field(default_factory=time.monotonic)
    known: dict[str, Findings] = field(default_factory=dict)
    focus: Property | None = None
    smallest: tuple[Plan, list[str]] | None = None

    def example(self, plan: Plan) -> None:
        text = plan.to_json_text()
        note(text)
        findings = self.known.get(text)
        if findings is None:
            if self.focus is not None and self.report.shrink_runs >= self.shrink_budget // 2:
                return  # the budget is spent: only scripts already run can fail
            findings = self._run(plan, text)
        if self.focus is None:
            self.focus = next((p for p in self.properties if findings.get(p.name)), None)
        if self.focus is not None and findings.get(self.focus.name):
            self.smallest = (plan, findings[self.focus.name])
            raise _PropertyFailed(f"{self.focus}: " + "; ".join(findings[self.focus.name]))

    def reduce(self) -> None:
        """Hypothesis shrinks values and lists by the bytes that drew them; this cuts what
        a script's reader counts (steps, notifications, content blocks, tools) by trying
        `smaller_plans` greedily, each run once, within what is left of the budget."""
        if self.focus is None or self.smallest is None:
            return
        plan, details = self.smallest
        improved = True
        while improved:
            improved = False
            for candidate in smaller_plans(plan):
                text = candidate.to_json_text()
                findings = self.known.get(text)
                if findings is None:
                    if self.report.shrink_runs >= self.shrink_budget:
                        self.smallest = (plan, details)
                        return
                    findings = self._run(candidate, text)
                if findings.get(self.focus.name):
                    plan, details = candidate, findings[self.focus.name]
                    improved = True
                    break
        self.smallest = (plan, details)

    def _run(self, plan: Plan, text: str) -> Findings:
        number = len(self.known) + 1
        run = run_plan(
            plan, self.factory, self.folder / f"example-{number}.json", op_timeout=self.op_timeout
        )
        fault = harness_fault(run)
        findings: Findings = {}
        if fault is not None:
            self.report.harness_faults.append(fault)
        else:
            findings = judge(plan, run, self.properties)
        self.known[text] = findings
        self.report.seconds = time.monotonic() - self.started  # for the progress line's rate
        if self.focus is None:
            self.report.examples += 1
            if self.progress is not None:
                self.progress(self.report)
        else:
            self.report.shrink_runs += 1
        return findings


def fuzz(
    factory: ClientFactory,
    *,
    revision: str = "2025-11-25",
    examples: int = 100,
    seed_value: int | None = None,
    save_failures: Path | None = None,
    properties: Sequence[Property] = PROPERTIES,
    client_spec: str = "harness.clients:ReferenceClient",
    op_timeout: float = DEFAULT_OP_TIMEOUT,
    shrink_budget: int = DEFAULT_SHRINK_BUDGET,
    progress: Callable[[FuzzReport], None] | None = None,
) -> FuzzReport:
    """Fuzz the client `factory` makes with `examples` generated plans at `revision` over
    stdio; the same `seed_value` draws the same plans. A failure is shrunk, and saved under
    `save_failures` (with the commands that replay it, naming the client as `client_spec`)."""
    chosen_seed = random.randrange(2**32) if seed_value is None else seed_value
    report = FuzzReport(revision, chosen_seed, tuple(properties))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcp-testbench-fuzz-") as folder:
        search = _Search(
            factory, tuple(properties), Path(folder), op_timeout, shrink_budget, progress, report
        )

        @settings(
            max_examples=examples,
            database=None,
            deadline=None,
            derandomize=False,
            report_multiple_bugs=False,
            phases=(Phase.generate, Phase.shrink),
            suppress_health_check=list(HealthCheck),
            verbosity=Verbosity.quiet,
            print_blob=False,
        )
        @seed(chosen_seed)
        @given(plans(revision))
        def search_one(plan: Plan) -> None:
            search.example(plan)

        with contextlib.suppress(_PropertyFailed):
            search_one()
        search.reduce()
        report.seconds = time.monotonic() - started
        if search.focus is not None and search.smallest is not None:
            plan, details = search.smallest
            failure = Failure(search.focus, details, plan)
            if save_failures is not None:
                _save(failure, save_failures, report, client_spec, factory, op_timeout)
            report.failures.append(failure)
    return report


def _save(
    failure: Failure,
    folder: Path,
    report: FuzzReport,
    client_spec: str,
    factory: ClientFactory,
    op_timeout: float,
) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    client = re.sub(r"[^A-Za-z0-9_]+", "-", client_spec.rpartition(":")[2]).strip("-")
    name = f"fuzz-{client}-{failure.violated.name}-{report.revision}-seed{report.seed}".lower()
    path = folder / f"{name}.json"
    failure.replay_command = (
        f"mcp-testbench fuzz --client {client_spec} --revision {report.revision} "
        f"--transport stdio --replay {path}"
    )
    failure.serve_command = f"mcp-testbench serve {path} --stdio --revision {report.revision}"
    script = failure.plan.to_script(name)
    script["description"] = (
        f"Fails {failure.violated} for {client_spec}: {'; '.join(failure.details)[:400]} "
        f"Replay: {failure.replay_command}"
    )
    parse_script(script, source=str(path))  # an ordinary script: `validate` takes it
    path.write_text(json.dumps(script, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    failure.script = path
    again = replay(path, factory, (failure.violated,), op_timeout=op_timeout)
    failure.reproduced = bool(again.get(failure.violated.name))


def replay(
    script_path: Path,
    factory: ClientFactory,
    properties: Sequence[Property] = PROPERTIES,
    *,
    op_timeout: float = DEFAULT_OP_TIMEOUT,
) -> Findings:
    """Run the client once against a saved (or any fuzz-written) script; what each property
    found. ValueError: the script was not written by the fuzzer; a harness fault raises
    RuntimeError (it says nothing of the client)."""
    data = json.loads(script_path.read_text(encoding="utf-8"))
    parse_script(data, source=str(script_path))
    plan = plan_of_script(data)
    with tempfile.TemporaryDirectory(prefix="mcp-testbench-fuzz-") as folder:
        run = run_plan(plan, factory, Path(folder) / script_path.name, op_timeout=op_timeout)
    fault = harness_fault(run)
    if fault is not None:
        raise RuntimeError(fault)
    return judge(plan, run, properties)
