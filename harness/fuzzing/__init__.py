"""Fuzzing a client with generated server behaviour (issue 37).

`_plans` generates what the server does (a `Plan`, written as an ordinary script: tools,
resources and prompts listed in pages with cursors, tool results of every content type,
structuredContent with its outputSchema, isError results and JSON-RPC errors, resource
contents, prompts, completions; notifications, server requests, delays and deliberate
faults around them);
`_served` adapts a plan to the revision and transport it is served at (over HTTP, each
reply a JSON body or an SSE stream of generated framing); `_properties` the properties a
client must keep on any of them, each naming its requirements; `_fuzzer` runs the search
through `harness.running`, shrinks a failure and saves it as a script with the command
that replays it. docs/fuzzing.md is the guide.
"""

from __future__ import annotations

from harness.fuzzing._fuzzer import (
    DEFAULT_OP_TIMEOUT,
    DEFAULT_SHRINK_BUDGET,
    ClientCannotStart,
    Failure,
    FuzzReport,
    fuzz,
    judge,
    replay,
    run_plan,
)
from harness.fuzzing._plans import (
    FUZZ_HANDLERS,
    CallTool,
    Complete,
    GetPrompt,
    Listing,
    ListPrompts,
    ListResources,
    ListTools,
    Operation,
    Page,
    Plan,
    ReadResource,
    plan_of_script,
    plans,
    smaller_plans,
)
from harness.fuzzing._properties import PROPERTIES, Property, by_name, harness_fault
from harness.fuzzing._served import (
    FUZZ_REVISIONS,
    FUZZ_TRANSPORTS,
    ServedPlan,
    served_of_script,
    served_plans,
    smaller_served,
)

__all__ = [
    "DEFAULT_OP_TIMEOUT",
    "DEFAULT_SHRINK_BUDGET",
    "FUZZ_HANDLERS",
    "FUZZ_REVISIONS",
    "FUZZ_TRANSPORTS",
    "PROPERTIES",
    "CallTool",
    "ClientCannotStart",
    "Complete",
    "Failure",
    "FuzzReport",
    "GetPrompt",
    "ListPrompts",
    "ListResources",
    "ListTools",
    "Listing",
    "Operation",
    "Page",
    "Plan",
    "Property",
    "ReadResource",
    "ServedPlan",
    "by_name",
    "fuzz",
    "harness_fault",
    "judge",
    "plan_of_script",
    "plans",
    "replay",
    "run_plan",
    "served_of_script",
    "served_plans",
    "smaller_plans",
    "smaller_served",
]
