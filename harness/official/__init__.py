"""Interoperation with the official conformance runner (`@modelcontextprotocol/conformance`):
its scored check ids mapped to ours (`_auth_checks`), and its expected-failures YAML read as a
baseline (`_expected_failures`).
"""

from __future__ import annotations

from harness.official._auth_checks import OFFICIAL_AUTH_CHECKS, RUNNER_VERSIONS
from harness.official._expected_failures import OfficialBaselineError, load_official

__all__ = [
    "OFFICIAL_AUTH_CHECKS",
    "RUNNER_VERSIONS",
    "OfficialBaselineError",
    "load_official",
]
