"""The fuzzer: Hypothesis draws plans, the harness runs each against the client, the
properties judge the run; a failure is shrunk and saved as a script that replays it.

Each plan is written as a script and run like any scenario (`harness.running.execute`: the
stdio mock, forked from the harness's pool, or the Streamable HTTP mock on a loopback port;
the client's connect and operations, each bounded in time). A driver's client is one
instance of a process the driver pool keeps across examples (`reset` between them). Every property is
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
import shlex
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, note, seed, settings

from harness.clients import OPERATIONS, McpClient
from harness.fuzzing._plans import FUZZ_HANDLERS, Plan
from harness.fuzzing._properties import PROPERTIES, Property, harness_fault
from harness.fuzzing._served import (
    ServedPlan,
    is_request,
    served_of_script,
    served_plans,
    smaller_served,
)
from harness.running import MAY_HAPPEN_BOUND, Scenario, ScenarioRun, Session, execute
from harness.running import Operation as RunOperation
from mock_servers import parse_script

__all__ = [
    "DEFAULT_OP_TIMEOUT",
    "DEFAULT_SHRINK_BUDGET",
    "ClientCannotStart",
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
that): a plan delays an answer by far less, so a client that needs it has hung."""
DEFAULT_SHRINK_BUDGET = 80
"""Runs of the client spent on shrinking a failure, at most: half for Hypothesis's shrinker,
the rest (and what it left) for the structural pass (`smaller_served`)."""


def _drive_for(plan: Plan) -> Callable[[Session], Any]:
    async def drive(session: Session) -> None:
        await session.connect()
        supports = session.client.supports
        for operation in plan.operations:
            op, args = operation.asked
            if op in OPERATIONS and supports and op not in supports:
                # A driver protocol 1.1 operation the client does not offer: not asked, and
                # recorded so (the properties leave it out).
                why = f"not asked: the client does not name {op} in supports"
                session.operations.append(
                    RunOperation(
                        op, {"args": list(args)}, error={"kind": "unsupported", "message": why}
                    )
                )
                continue
            await session.call(op, *args)
        sent_after = sum(1 for op in plan.operations for m in op.after if is_request(m))
        if sent_after:
            # A request sent after the last answer races the client's close, twice: the
            # mock may not have sent it yet when the last operation returns, and the client
            # may not have answered it. Wait, bounded, until every server request the plan
            # holds went out and as many answers came back (whatever their ids: the
            # properties judge those).
            expected = sent_after + sum(
                1 for op in plan.operations for m in op.before if is_request(m)
            )
            await session.until(
                "an answer to each server request",
                lambda entries: _answered(entries, expected),
                MAY_HAPPEN_BOUND,
            )

    return drive


def _answered(entries: list[dict[str, Any]], expected: int) -> bool:
    messages = [(e["direction"], e["message"]) for e in entries if e["kind"] == "message"]
    asked = sum(1 for who, m in messages if who == "server" and is_request(m))
    answers = sum(1 for who, m in messages if who == "client" and "method" not in m and "id" in m)
    return asked >= expected and answers >= asked


def run_plan(
    plan: Plan | ServedPlan,
    factory: ClientFactory,
    script_path: Path,
    *,
    op_timeout: float = DEFAULT_OP_TIMEOUT,
) -> ScenarioRun:
    """Write `plan` to `script_path` and run the client against it over its transport (a
    bare `Plan`: over stdio)."""
    served = plan if isinstance(plan, ServedPlan) else ServedPlan(plan)
    script_path.write_text(served.to_json_text(), encoding="utf-8")
    scenario = Scenario(
        id=f"fuzz {script_path.stem}",
        script=str(script_path.resolve()),  # absolute: taken as it is, not under fixtures/
        checks=(),
        drive=_drive_for(served.plan),
        revisions=(served.revision,),
        transports=(served.transport,),
        handlers=FUZZ_HANDLERS,
    )
    return execute(scenario, served.revision, served.transport, factory, op_timeout=op_timeout)


def judge(plan: Plan, run: ScenarioRun, properties: Sequence[Property] = PROPERTIES) -> Findings:
    """What each property found wrong with the run (an empty list: it holds)."""
    return {p.name: p.check(plan, run) for p in properties}


@dataclass
class Failure:
    """A property that failed, with the shrunk plan that shows it and where it was saved."""

    violated: Property
    details: list[str]
    served: ServedPlan
    script: Path | None = None
    replay_command: str = ""
    serve_command: str = ""
    reproduced: bool | None = None
    """Whether a fresh run of the saved script failed the property again (None: not saved)."""

    @property
    def plan(self) -> Plan:
        return self.served.plan

    @property
    def steps(self) -> int:
        return len(self.served.to_script()["steps"])


@dataclass
class FuzzReport:
    revision: str
    seed: int
    properties: tuple[Property, ...]
    transport: str = "stdio"
    examples: int = 0
    """Examples run while searching (every property is checked on each)."""
    shrink_runs: int = 0
    seconds: float = 0.0
    failures: list[Failure] = field(default_factory=list)
    harness_faults: list[str] = field(default_factory=list)

    @property
    def examples_per_second(self) -> float:
        """Runs of the client (examples and shrinking runs) per second of the search."""
        runs = self.examples + self.shrink_runs
        return runs / self.seconds if self.seconds > 0 else 0.0

    @property
    def failed(self) -> int:
        """Failures of FAIL-level properties (a WARN-level one is reported, not failed)."""
        return sum(1 for f in self.failures if f.violated.level == "FAIL")

    def summary(self) -> str:
        saved = sum(1 for f in self.failures if f.script is not None)
        warned = len(self.failures) - self.failed
        warned_part = f"{warned} warned, " if warned else ""
        return (
            f"fuzz {self.revision} {self.transport} seed {self.seed}: {len(self.properties)} properties "
            f"tried on {self.examples} examples ({self.shrink_runs} more runs shrinking), "
            f"{self.failed} failed, {warned_part}{saved} failures saved, "
            f"{len(self.harness_faults)} harness faults; "
            f"{self.examples_per_second:.1f} examples/s"
        )


class _PropertyFailed(AssertionError):
    pass


class ClientCannotStart(RuntimeError):
    """The client could not be made or started (its factory failed, a driver never said
    hello): no example can say anything of it, so the search stops at once."""


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
    smallest: tuple[ServedPlan, list[str]] | None = None
    wanted: int = 0
    """Examples to run while searching: past them, a new script is not run (it passes)."""
    warned: tuple[Property, ServedPlan, list[str]] | None = None
    """The first WARN-level property an example broke (never the search's focus: shrunk
    and reported only when no FAIL-level property failed)."""

    def example(self, plan: ServedPlan) -> None:
        text = plan.to_json_text()
        note(text)
        findings = self.known.get(text)
        if findings is None:
            if self.focus is not None and self.report.shrink_runs >= self.shrink_budget // 2:
                return  # the budget is spent: only scripts already run can fail
            if self.focus is None and self.report.examples >= self.wanted:
                return  # enough examples: a later round's surplus draws run nothing
            findings = self._run(plan, text)
        if self.focus is None:
            broken = [p for p in self.properties if findings.get(p.name)]
            self.focus = next((p for p in broken if p.level == "FAIL"), None)
            if self.warned is None and broken and self.focus is None:
                self.warned = (broken[0], plan, findings[broken[0].name])
        if self.focus is not None and findings.get(self.focus.name):
            self.smallest = (plan, findings[self.focus.name])
            raise _PropertyFailed(f"{self.focus}: " + "; ".join(findings[self.focus.name]))

    def reduce(self) -> None:
        """Hypothesis shrinks values and lists by the bytes that drew them; this cuts what
        a script's reader counts (steps, notifications, content blocks, tools) by trying
        `smaller_served` greedily, each run once, within what is left of the budget."""
        if self.focus is None or self.smallest is None:
            return
        plan, details = self.smallest
        improved = True
        while improved:
            improved = False
            for candidate in smaller_served(plan):
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

    def _run(self, plan: ServedPlan, text: str) -> Findings:
        number = len(self.known) + 1
        run = run_plan(
            plan, self.factory, self.folder / f"example-{number}.json", op_timeout=self.op_timeout
        )
        if run.start_error:
            raise ClientCannotStart(
                run.start_error + (f"\n{run.diagnostics}" if run.diagnostics else "")
            )
        fault = harness_fault(run)
        findings: Findings = {}
        if fault is not None:
            self.report.harness_faults.append(fault)
        else:
            findings = judge(plan.plan, run, self.properties)
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
    transport: str = "stdio",
    examples: int = 100,
    seed_value: int | None = None,
    save_failures: Path | None = None,
    properties: Sequence[Property] = PROPERTIES,
    client_spec: str = "harness.clients:ReferenceClient",
    driver: str | None = None,
    op_timeout: float = DEFAULT_OP_TIMEOUT,
    shrink_budget: int = DEFAULT_SHRINK_BUDGET,
    progress: Callable[[FuzzReport], None] | None = None,
) -> FuzzReport:
    """Fuzz the client `factory` makes with `examples` generated plans at `revision` over
    `transport`; the same `seed_value` draws the same plans. A failure is shrunk, and saved
    under `save_failures` (with the commands that replay it, naming the client as
    `client_spec`, or as `--driver driver` when `driver` is the command of the driver the
    factory's clients talk to). ClientCannotStart: the first client could not start."""
    chosen_seed = random.randrange(2**32) if seed_value is None else seed_value
    report = FuzzReport(revision, chosen_seed, tuple(properties), transport)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mcp-testbench-fuzz-") as folder:
        search = _Search(
            factory, tuple(properties), Path(folder), op_timeout, shrink_budget, progress, report
        )
        search.wanted = examples

        # Different draws can write the same script (the run is then not repeated, and not
        # counted): while the examples run fall short, a further round draws more from a
        # seed derived from the first (the same seed runs the same rounds), with room for
        # the smallest plans, which every round draws first.
        for round_number in range(_ROUNDS):
            wanted = examples - report.examples
            if wanted <= 0 or search.focus is not None:
                break
            draws = wanted if round_number == 0 else wanted + _ROUND_SLACK
            strategy = served_plans(revision, transport)
            _search_round(search, strategy, draws, chosen_seed, round_number)
        if search.focus is None and search.warned is not None:
            search.focus, plan, details = search.warned  # shrunk by the structural pass only
            search.smallest = (plan, details)
        search.reduce()
        report.seconds = time.monotonic() - started
        if search.focus is not None and search.smallest is not None:
            plan, details = search.smallest
            failure = Failure(search.focus, details, plan)
            if save_failures is not None:
                who = f"--driver {shlex.quote(driver)}" if driver else f"--client {client_spec}"
                _save(failure, save_failures, report, who, factory, op_timeout)
            report.failures.append(failure)
    return report


_ROUNDS = 8
_ROUND_SLACK = 20


def _search_round(
    search: _Search, strategy: Any, examples: int, first_seed: int, round_number: int
) -> None:
    """One Hypothesis search of at most `examples` plans; a property's failure ends it
    (shrunk), and `search` keeps it."""

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
    @seed(first_seed + round_number * 2**32)
    @given(strategy)
    def search_one(plan: ServedPlan) -> None:
        search.example(plan)

    with contextlib.suppress(_PropertyFailed):
        search_one()


def _save(
    failure: Failure,
    folder: Path,
    report: FuzzReport,
    who: str,
    factory: ClientFactory,
    op_timeout: float,
) -> None:
    """Save the failure's script; `who` is the command line's `--client MODULE:FACTORY`
    or `--driver CMD`."""
    folder.mkdir(parents=True, exist_ok=True)
    named = "driver" if who.startswith("--driver") else who.rpartition(":")[2]
    client = re.sub(r"[^A-Za-z0-9_]+", "-", named).strip("-")
    name = (
        f"fuzz-{client}-{failure.violated.name}-{report.revision}-{report.transport}"
        f"-seed{report.seed}"
    ).lower()
    path = folder / f"{name}.json"
    failure.replay_command = (
        f"mcp-testbench fuzz {who} --revision {report.revision} "
        f"--transport {report.transport} --replay {path}"
    )
    served = "--stdio" if report.transport == "stdio" else "--http 127.0.0.1:0"
    failure.serve_command = f"mcp-testbench serve {path} {served} --revision {report.revision}"
    script = failure.served.to_script(name)
    script["description"] = (
        f"Fails {failure.violated} for {who.split(' ', 1)[1]}: "
        f"{'; '.join(failure.details)[:400]} Replay: {failure.replay_command}"
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
    served = served_of_script(data)
    with tempfile.TemporaryDirectory(prefix="mcp-testbench-fuzz-") as folder:
        run = run_plan(served, factory, Path(folder) / script_path.name, op_timeout=op_timeout)
    fault = harness_fault(run)
    if fault is not None:
        raise RuntimeError(fault)
    return judge(served.plan, run, properties)
