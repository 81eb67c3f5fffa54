"""Shared test configuration: hypothesis profiles.

The "ci" profile (chosen when CI is set, or with HYPOTHESIS_PROFILE=ci) runs every
property test with at least 200 examples; tests that need more ask for it with
`settings(max_examples=...)` under `ci_examples()`. "dev" is quicker for local runs.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=50, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)
