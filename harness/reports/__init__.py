"""Reports made from results: the terminal summary, HTML, JSON, markdown and JUnit
(`_report`), the baseline of known failures and how baselined items are shown (`_baseline`,
`_baseline_report`), the cross-client matrix (`_compare`), and docs/coverage.md (`_coverage`,
run as `python -m harness.reports._coverage`).
"""

from __future__ import annotations

from harness.reports._baseline import FAILING, Baseline, BaselineError, short_id
from harness.reports._baseline_report import baselined_groups
from harness.reports._compare import compare_pages, slug
from harness.reports._report import (
    INTERRUPTED_NOTE,
    WIDTH,
    RootCauseLine,
    format_evidence,
    root_causes,
    terminal_summary,
    wrap,
    write_reports,
)

__all__ = [
    "FAILING",
    "INTERRUPTED_NOTE",
    "WIDTH",
    "Baseline",
    "BaselineError",
    "RootCauseLine",
    "baselined_groups",
    "compare_pages",
    "format_evidence",
    "root_causes",
    "short_id",
    "slug",
    "terminal_summary",
    "wrap",
    "write_reports",
]
