"""Running scenarios: drive a client against a mock and keep everything as evidence.

`_scenario` declares scenarios and runs one (scenario, revision, transport) in a thread of its
own; `_window` keeps several runs going at once (the sliding window the plugin uses);
`_machine` says how loaded the machine is, for the bounds on a start.
"""

from __future__ import annotations

from harness.running._machine import load_factor
from harness.running._scenario import (
    HEADLESS_AUTHORIZATION,
    MAY_HAPPEN_BOUND,
    Entries,
    Operation,
    Scenario,
    ScenarioRun,
    Session,
    execute,
    stop_stdio_pool,
)
from harness.running._window import RunWindow

__all__ = [
    "HEADLESS_AUTHORIZATION",
    "MAY_HAPPEN_BOUND",
    "Entries",
    "Operation",
    "RunWindow",
    "Scenario",
    "ScenarioRun",
    "Session",
    "execute",
    "load_factor",
    "stop_stdio_pool",
]
