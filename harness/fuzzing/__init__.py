"""Fuzzing a client with generated server behaviour (issue 37, first slice).

`_plans` generates what the server does (a `Plan`, written as an ordinary script: tools
listed in pages with cursors, tool results of every content type, structuredContent with
its outputSchema, isError results and JSON-RPC errors, notifications around them);
`_properties` the properties a client must keep on any of them, each naming its
requirements; `_fuzzer` runs the search through `harness.running`, shrinks a failure and
saves it as a script with the command that replays it. docs/fuzzing.md is the guide.
"""

from __future__ import annotations

from harness.fuzzing._fuzzer import (
    DEFAULT_OP_TIMEOUT,
    DEFAULT_SHRINK_BUDGET,
    Failure,
    FuzzReport,
    fuzz,
    judge,
    replay,
    run_plan,
)
from harness.fuzzing._plans import (
    FUZZ_REVISIONS,
    CallTool,
    ListTools,
    Operation,
    Page,
    Plan,
    plan_of_script,
    plans,
    smaller_plans,
)
from harness.fuzzing._properties import PROPERTIES, Property, by_name, harness_fault

__all__ = [
    "DEFAULT_OP_TIMEOUT",
    "DEFAULT_SHRINK_BUDGET",
    "FUZZ_REVISIONS",
    "PROPERTIES",
    "CallTool",
    "Failure",
    "FuzzReport",
    "ListTools",
    "Operation",
    "Page",
    "Plan",
    "Property",
    "by_name",
    "fuzz",
    "harness_fault",
    "judge",
    "plan_of_script",
    "plans",
    "replay",
    "run_plan",
    "smaller_plans",
]
