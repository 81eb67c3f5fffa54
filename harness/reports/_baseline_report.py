"""How the reports show baselined items: expected failures, each with its reason.

A baselined item keeps its verdict (FAIL or BLOCKED: the client still has the defect)
and gains the baseline's reason (`"baselined"` in the JSON results). The matrix marks a
cell whose failures are all baselined with `*`, and each report lists them by reason.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from harness.reports._baseline import FAILING

__all__ = [
    "MARK",
    "baselined_cells",
    "baselined_count",
    "baselined_groups",
    "baselined_html",
    "baselined_markdown",
]

MARK = "*"
"""Appended to a matrix cell whose failing items are all baselined."""
_LEGEND = "* baselined: an expected failure listed in the baseline, with its reason below"


def _baselined(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in results if r.get("baselined") is not None and r["status"] in FAILING]


def baselined_count(results: Sequence[Mapping[str, Any]]) -> int:
    return len(_baselined(results))


def baselined_cells(results: Sequence[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """(check, "revision transport") cells whose failing items are all baselined."""
    failing: dict[tuple[str, str], bool] = {}
    for r in results:
        if r["status"] not in FAILING:
            continue
        cell = (str(r["check"]), f"{r['revision']} {r['transport']}")
        failing[cell] = failing.get(cell, True) and r.get("baselined") is not None
    return {cell for cell, all_baselined in failing.items() if all_baselined}


def baselined_groups(results: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(reason, "3 FAIL, 1 BLOCKED in tools.pagination, ...") per baseline reason."""
    by_reason: dict[str, list[Mapping[str, Any]]] = {}
    for r in _baselined(results):
        by_reason.setdefault(str(r["baselined"]), []).append(r)
    groups = []
    for reason, items in sorted(by_reason.items()):
        counts = Counter(str(r["status"]) for r in items)
        checks = sorted({str(r["check"]) for r in items})
        what = ", ".join(f"{counts[s]} {s}" for s in FAILING if counts[s])
        shown = ", ".join(checks[:4]) + (f" and {len(checks) - 4} more" if len(checks) > 4 else "")
        groups.append((reason, f"{what} in {shown}"))
    return groups


def baselined_markdown(results: Sequence[Mapping[str, Any]]) -> list[str]:
    items = _baselined(results)
    if not items:
        return []
    out = ["", "## Baselined (expected failures)", "", _LEGEND, ""]
    out += [f"- **{r['status']}** `{r['id']}`: baseline: {r['baselined']}" for r in items]
    return out


def baselined_html(results: Sequence[Mapping[str, Any]]) -> str:
    items = _baselined(results)
    if not items:
        return ""
    rows = "".join(
        f"<li><b>{html.escape(str(r['status']))}</b> <code>{html.escape(str(r['id']))}</code>"
        f": baseline: {html.escape(str(r['baselined']))}</li>"
        for r in items
    )
    return f"<h2>Baselined (expected failures)</h2><p>{html.escape(_LEGEND)}</p><ul>{rows}</ul>"
