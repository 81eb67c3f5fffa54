"""The conformance suite: every scenario, and the checks each one is judged by.

Modules by area; each declares its checks (registered in harness.judging._catalogue.CATALOGUE)
next to the scenarios that exercise them.
"""

from __future__ import annotations

import dataclasses

from harness.running import Scenario
from harness.suite import (
    auth,
    features,
    lifecycle,
    robustness,
    stateless,
    tools,
    transports,
    utilities,
)
from harness.suite._requirements import REQUIREMENTS, Requirement

__all__ = ["REQUIREMENTS", "SCENARIOS", "Requirement", "scenario"]


def _with_transport_checks(scenario: Scenario) -> Scenario:
    # The tools scenario runs on every client and transport: the transport-level checks
    # are judged on it rather than on a scenario of their own.
    extra = transports.ON_EVERY_TRANSPORT + stateless.ON_EVERY_TRANSPORT
    return dataclasses.replace(scenario, checks=scenario.checks + extra)


SCENARIOS: tuple[Scenario, ...] = (
    *lifecycle.SCENARIOS,
    *(_with_transport_checks(s) if s.id == "tools-call" else s for s in tools.SCENARIOS),
    *transports.SCENARIOS,
    *stateless.SCENARIOS,
    *features.SCENARIOS,
    *robustness.SCENARIOS,
    *utilities.SCENARIOS,
    *auth.SCENARIOS,
)


def scenario(scenario_id: str) -> Scenario:
    for candidate in SCENARIOS:
        if candidate.id == scenario_id:
            return candidate
    raise KeyError(f"no scenario {scenario_id!r}; known: {', '.join(s.id for s in SCENARIOS)}")
