"""The official specification data some tests read: the MCP schemas (`mcp-schemas/`), the
specification's pages (`mcp-spec/`) and the requirements digest (`spec-client-requirements.md`).
Test data only: never shipped, never copied into the project.

One setting finds it, `MCP_TESTBENCH_SPEC_DATA` (a folder with those three), by default the
`shared` folder beside the checkout. When it is absent the tests that need it are skipped, all
with one reason (so `-ra` folds them into one line that says what to fetch and where to put
it); under `CI` they fail instead, since CI must run them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

ROOT = Path(__file__).resolve().parents[1]
SETTING = "MCP_TESTBENCH_SPEC_DATA"


def spec_data_dir() -> Path:
    return Path(os.environ.get(SETTING) or ROOT.parent / "shared")


def spec_data(relative: str) -> Path:
    """`relative` inside the spec data folder, or the test is skipped (failed under CI)."""
    path = spec_data_dir() / relative
    if not path.exists():
        absent()
    return path


def absent() -> NoReturn:
    reason = (
        f"the official spec data is not at {spec_data_dir()}: put the project's shared folder "
        "(mcp-schemas/<revision>/schema.json, the schema files of the "
        "modelcontextprotocol/modelcontextprotocol repository; mcp-spec/; "
        f"spec-client-requirements.md) there, beside the checkout, or set {SETTING} to it"
    )
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: these tests must run)", pytrace=False)
    pytest.skip(reason)
