"""Running scenarios: drive a client against a mock and keep everything as evidence.

`_scenario` declares scenarios and runs one (scenario, revision, transport) in a thread of its
own; `_window` keeps several runs going at once (the sliding window the plugin uses);
`_machine` says how loaded the machine is, for the bounds on a start; `_conformance` runs a
conformance client (the official runner's convention) against a script's mock.
"""

from __future__ import annotations

from harness.running._conformance import (
    AUTHORIZATION_SERVER,
    CONTEXT_VARIABLE,
    DEFAULT_GRACE,
    RUNNER_TIMEOUT_MS,
    SCENARIO_VARIABLE,
    VERSION_VARIABLE,
    ConformanceRun,
    ConformanceTarget,
    run_conformance_client,
    runner_command_line,
    stop_conformance_clients,
)
from harness.running._machine import load_factor, usable_cores
from harness.running._scenario import (
    HEADLESS_AUTHORIZATION,
    MAY_HAPPEN_BOUND,
    Entries,
    Operation,
    Scenario,
    ScenarioRun,
    Session,
    TranscriptWatch,
    execute,
    stop_stdio_pool,
)
from harness.running._window import RunWindow

__all__ = [
    "AUTHORIZATION_SERVER",
    "CONTEXT_VARIABLE",
    "DEFAULT_GRACE",
    "HEADLESS_AUTHORIZATION",
    "MAY_HAPPEN_BOUND",
    "RUNNER_TIMEOUT_MS",
    "SCENARIO_VARIABLE",
    "VERSION_VARIABLE",
    "ConformanceRun",
    "ConformanceTarget",
    "Entries",
    "Operation",
    "RunWindow",
    "Scenario",
    "ScenarioRun",
    "Session",
    "TranscriptWatch",
    "execute",
    "load_factor",
    "run_conformance_client",
    "runner_command_line",
    "stop_conformance_clients",
    "stop_stdio_pool",
    "usable_cores",
]
