"""Interoperation with the official conformance runner (`@modelcontextprotocol/conformance`):
its scored check ids mapped to ours (`_auth_checks`), its expected-failures YAML read as a
baseline (`_expected_failures`), its client scenarios served here and their check ids
(`_client_checks`), its verdicts on them worked out from a transcript (`_parity`; for
its authorization scenarios `_auth_parity`), and one
such scenario run and judged, the suite's own checks beside them (`_conformance_runs`).
"""

from __future__ import annotations

from harness.official._auth_checks import OFFICIAL_AUTH_CHECKS, RUNNER_VERSIONS
from harness.official._auth_parity import AUTH_SCENARIO_RULES, AuthRules
from harness.official._client_baseline import (
    BaselineOutcome,
    ClientBaseline,
    check_client_baseline,
    load_client_baseline,
)
from harness.official._client_checks import (
    CLIENT_RUNNER_VERSION,
    NOT_SCORED_CLIENT,
    SCORED_CLIENT,
    SERVED,
    ClientScenario,
    OfficialClientCheck,
    served_scenario,
)
from harness.official._conformance_runs import (
    ConformanceResult,
    conformance_scenario,
    conformance_target,
    judge_conformance_run,
    our_checks,
)
from harness.official._expected_failures import OfficialBaselineError, load_official
from harness.official._parity import (
    JUDGED,
    OfficialStatus,
    OfficialVerdict,
    ScenarioVerdict,
    TierFigure,
    official_verdicts,
    scenario_verdict,
    tier_figure,
)

__all__ = [
    "AUTH_SCENARIO_RULES",
    "CLIENT_RUNNER_VERSION",
    "JUDGED",
    "NOT_SCORED_CLIENT",
    "OFFICIAL_AUTH_CHECKS",
    "RUNNER_VERSIONS",
    "SCORED_CLIENT",
    "SERVED",
    "AuthRules",
    "BaselineOutcome",
    "ClientBaseline",
    "ClientScenario",
    "ConformanceResult",
    "OfficialBaselineError",
    "OfficialClientCheck",
    "OfficialStatus",
    "OfficialVerdict",
    "ScenarioVerdict",
    "TierFigure",
    "check_client_baseline",
    "conformance_scenario",
    "conformance_target",
    "judge_conformance_run",
    "load_client_baseline",
    "load_official",
    "official_verdicts",
    "our_checks",
    "scenario_verdict",
    "served_scenario",
    "tier_figure",
]
