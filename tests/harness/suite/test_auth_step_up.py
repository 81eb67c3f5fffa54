"""`auth.step-up-bounded` on hand-built runs: a server that ends the loop itself (410
`test_complete` after its `give_up_after` refusals, as the official runner's does) still
saw each return of the client. No client, no mock."""

from __future__ import annotations

from typing import Any

import pytest

import harness.suite  # noqa: F401  (registers the checks)
from harness.judging import CATALOGUE, Status, judge
from harness.running import Scenario, ScenarioRun


def _answer(seq: int, outcome: str) -> dict[str, Any]:
    status = {"insufficient_scope": 403, "test_complete": 410}[outcome]
    return {"seq": seq, "t": seq / 100, "kind": "auth", "request": seq, "server": "resource",
            "endpoint": "mcp", "method": "POST", "status": status, "outcome": outcome}  # fmt: skip


def _judged(outcomes: list[str]) -> Any:
    entries = [_answer(seq, outcome) for seq, outcome in enumerate(outcomes, start=1)]
    run = ScenarioRun(
        Scenario("fake", "fake.json", checks=()),
        "2025-11-25",
        "http",
        supports=frozenset({"http", "auth"}),
        transcript={"entries": entries},
    )
    return judge(CATALOGUE["auth.step-up-bounded"], run)


@pytest.mark.parametrize(
    ("outcomes", "status", "words"),
    [
        (["insufficient_scope"] * 3, Status.PASS, "gave up after 3"),
        (["insufficient_scope"] * 4, Status.WARN, "met 4 403 insufficient_scope answers"),
        # The server's 410 ended the loop: the client had come back a fourth time.
        (
            ["insufficient_scope"] * 3 + ["test_complete"],
            Status.WARN,
            "came back 1 more time(s), until the server gave up",
        ),
    ],
)
def test_a_return_after_the_server_gave_up_still_counts(
    outcomes: list[str], status: Status, words: str
) -> None:
    verdict = _judged(outcomes)
    assert verdict.status is status, verdict.reason
    assert words in verdict.reason
