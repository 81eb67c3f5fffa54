"""Falsifiability of the robustness checks (harness/suite/robustness.py).

Same structure as tests/harness/suite/test_mutations.py: each mutant breaks one rule; its run gets the
named verdicts and every other check of the run still passes. (A client that breaks down on
an unmatched response, the mutant of `jsonrpc.other-type-response-survived`, is
`BreaksOnLateResponse` of the features cases.)
"""

from __future__ import annotations

from typing import Any

import pytest
from _mutation import Case, assert_mutant_fails_exactly, assert_reference_passes

from harness.clients import ClientError, ReferenceClient

_KNOWN_TOOL_MEMBERS = frozenset(
    {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons"}
)


class StrictToolMembers(ReferenceClient):
    """RPC-8: refuses a tool list whose tools carry members it does not know."""

    async def list_tools(self) -> dict[str, Any]:
        listing = await super().list_tools()
        for tool in listing.get("tools", []):
            unknown = set(tool) - _KNOWN_TOOL_MEMBERS - {"_meta"}
            if unknown or set(tool.get("_meta") or {}):
                raise ClientError("other", f"unexpected members {sorted(unknown)} in a tool")
        return listing


CASES = {
    "strict-tool-members": Case(
        StrictToolMembers,
        ("robustness", "2024-11-05", "sse-legacy"),
        # No sentence binds the client to accept members no revision defines: a NOTE.
        {"jsonrpc.unknown-members-tolerated": "NOTE"},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutant_fails_exactly_its_checks(name: str) -> None:
    assert_mutant_fails_exactly(name, CASES[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_passes_the_same_run(name: str) -> None:
    assert_reference_passes(CASES[name])
