"""Judging: from a scenario run to one verdict per check.

`_verdicts` the verdicts and what each means; `_triggers` the conditions that make a check
applicable; `_catalogue` the registry every check is declared into (its requirements, trigger
and rule); `_preconditions` the root causes a run holds (what blocks the rest); `_judge`
applies a check to a run, in that order: SKIP, root cause, trigger, rule.
"""

from __future__ import annotations

from harness.judging._catalogue import (
    CATALOGUE,
    TRANSPORTS,
    Check,
    Clause,
    Level,
    Silence,
    check,
    clause,
    keyword_of,
    silent,
)
from harness.judging._judge import judge, not_judged
from harness.judging._preconditions import invalid_line_owner, unread_initialized
from harness.judging._triggers import Trigger, asked, client_sent, fault, http, server_sent, trigger
from harness.judging._verdicts import (
    Defect,
    Status,
    Verdict,
    blocked,
    fail,
    not_applicable,
    passed,
    skip,
    violated,
    warn,
)

__all__ = [
    "CATALOGUE",
    "TRANSPORTS",
    "Check",
    "Clause",
    "Defect",
    "Level",
    "Silence",
    "Status",
    "Trigger",
    "Verdict",
    "asked",
    "blocked",
    "check",
    "clause",
    "client_sent",
    "fail",
    "fault",
    "http",
    "invalid_line_owner",
    "judge",
    "keyword_of",
    "not_applicable",
    "not_judged",
    "passed",
    "server_sent",
    "silent",
    "skip",
    "trigger",
    "unread_initialized",
    "violated",
    "warn",
]
