"""Reports: per-check JSON, a markdown and an HTML matrix, and a summary line."""

from __future__ import annotations

import html
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness._baseline_report import (
    MARK,
    baselined_cells,
    baselined_count,
    baselined_html,
    baselined_markdown,
)

__all__ = [
    "check_anchor",
    "format_evidence",
    "item_anchor",
    "matrix",
    "root_cause_lines",
    "root_causes",
    "summary_line",
    "write_reports",
]

# Worst first: a cell of the matrix shows the worst verdict among its items (a check
# seen to pass in one scenario of a column and not applicable in another passed there).
_ORDER = ("FAIL", "BLOCKED", "WARN", "PASS", "N/A", "SKIP")
_MARK = {
    "PASS": "PASS",
    "FAIL": "FAIL",
    "WARN": "WARN",
    "BLOCKED": "blkd",
    "N/A": "n/a",
    "SKIP": "skip",
    None: "",
}


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_evidence(evidence: Iterable[Mapping[str, Any]]) -> list[str]:
    """One readable line per piece of evidence (transcript entry or operation)."""
    lines = []
    for item in evidence:
        if "op" in item:
            outcome = (
                f"error {_short(item['error'])}"
                if "error" in item
                else f"-> {_short(item.get('value'))}"
            )
            lines.append(f"client.{item['op']}({_short(item.get('args'), 80)}) {outcome}")
            continue
        kind = item.get("kind")
        head = f"#{item.get('seq')} t={item.get('t')}s {kind}"
        if kind == "message":
            lines.append(f"{head} {item.get('direction')}: {_short(item.get('message'))}")
        elif kind == "http_request":
            lines.append(
                f"{head} {item.get('method')} {item.get('path')} headers={_short(item.get('headers'), 200)}"
                f" body={_short(item.get('body'), 120)}"
            )
        elif kind == "http_response":
            lines.append(
                f"{head} status={item.get('status')} headers={_short(item.get('headers'), 200)}"
            )
        else:
            rest = {k: v for k, v in item.items() if k not in ("seq", "t", "kind")}
            lines.append(f"{head} {_short(rest)}")
    return lines


def summary_line(results: Sequence[Mapping[str, Any]]) -> str:
    """`N items of M checks for <client>: ...`: an item is one check judged on one run."""
    counts = Counter(str(r["status"]) for r in results)
    parts = ", ".join(f"{counts[s]} {s}" for s in _ORDER if counts[s])
    clients = sorted({str(r.get("client")) for r in results if r.get("client")})
    who = f" for {', '.join(clients)}" if clients else ""
    checks = len({r.get("check") for r in results})
    baselined = _baselined_note(results)
    return f"mcp-testbench: {len(results)} items of {checks} checks{who}: {parts or 'none ran'}{baselined}"


def _baselined_note(results: Sequence[Mapping[str, Any]]) -> str:
    count = baselined_count(results)
    return f" ({count} of them baselined)" if count else ""


def root_causes(results: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, int, str]]:
    """What to fix first: (root cause, its own verdict, items it blocks, why), most
    blocking first. A root cause is a check (its worst verdict in this run, or "not
    judged" when no scenario of the run judged it) or a failure of the client itself."""
    blocked = Counter(str(r["root"]) for r in results if r["status"] == "BLOCKED")
    reasons = {str(r["root"]): str(r["reason"]) for r in results if r["status"] == "BLOCKED"}
    own: dict[str, str] = {}
    for r in results:
        current = own.get(str(r["check"]))
        status = str(r["status"])
        if current is None or _ORDER.index(status) < _ORDER.index(current):
            own[str(r["check"])] = status
    rows = []
    for root, count in blocked.most_common():
        verdict = own.get(root, "FAIL" if root.startswith("client.") else "not judged")
        why = reasons[root].split(": ", 1)[-1]
        rows.append((root, verdict, count, why))
    return rows


def root_cause_lines(results: Sequence[Mapping[str, Any]]) -> list[str]:
    return [
        f"{root} {verdict} blocks {count} item{'s' if count != 1 else ''}: {why}"
        for root, verdict, count, why in root_causes(results)
    ]


def matrix(
    results: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[tuple[str, str, dict[str, str]]]]:
    """Columns (revision/transport) and rows (check, level, cell per column)."""
    columns = sorted({f"{r['revision']} {r['transport']}" for r in results})
    cells: dict[str, dict[str, str]] = {}
    levels: dict[str, str] = {}
    for r in results:
        column = f"{r['revision']} {r['transport']}"
        row = cells.setdefault(str(r["check"]), {})
        levels[str(r["check"])] = f"{r['level']} {', '.join(r['requirements'])}"
        current = row.get(column)
        status = str(r["status"])
        if current is None or _ORDER.index(status) < _ORDER.index(current):
            row[column] = status
    rows = [(check, levels[check], cells[check]) for check in sorted(cells)]
    return columns, rows


def _markdown(results: Sequence[Mapping[str, Any]]) -> str:
    columns, rows = matrix(results)
    out = ["# MCP client conformance", "", summary_line(results), ""]
    roots = root_cause_lines(results)
    if roots:
        out += ["## Root causes (fix these first)", "", *[f"- {line}" for line in roots], ""]
    out.append("| check | requirement | " + " | ".join(columns) + " |")
    out.append("|---|---|" + "---|" * len(columns))
    mark = _baselined_mark(results)
    for check, level, row in rows:
        out.append(
            f"| {check} | {level} | "
            + " | ".join(_MARK[row.get(c)] + mark(check, c) for c in columns)
            + " |"
        )
    out += baselined_markdown(results)
    failures = [r for r in results if r["status"] in ("FAIL", "WARN", "N/A")]
    if failures:
        out += ["", "## Failures, warnings and what was not applicable", ""]
        for r in failures:
            out.append(f"- **{r['status']}** `{r['id']}`: {r['reason']} ({r['spec']})")
    return "\n".join(out) + "\n"


def _html(results: Sequence[Mapping[str, Any]]) -> str:
    columns, rows = matrix(results)
    colour = {
        "PASS": "#c8f7c5",
        "FAIL": "#f7c5c5",
        "BLOCKED": "#e7b5e7",
        "WARN": "#f7ecc5",
        "N/A": "#f4f4f4",
        "SKIP": "#e8e8e8",
    }
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    mark = _baselined_mark(results)
    for check, level, row in rows:
        tds = "".join(
            f'<td style="background:{colour.get(row.get(c) or "", "#fff")}">{_MARK[row.get(c)]}{mark(check, c)}</td>'
            for c in columns
        )
        body.append(
            f'<tr id="{html.escape(check_anchor(check))}"><th>{html.escape(check)}</th>'
            f"<td>{html.escape(level)}</td>{tds}</tr>"
        )
    details = "".join(
        f'<li id="{html.escape(item_anchor(str(r["id"])))}"><b>{r["status"]}</b> '
        f"<code>{html.escape(str(r['id']))}</code>: {html.escape(str(r['reason']))}"
        f' (<a href="{html.escape(str(r["spec"]))}">spec</a>)</li>'
        for r in results
        if r["status"] in ("FAIL", "BLOCKED", "WARN", "N/A")
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>MCP client conformance</title>"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #999;"
        "padding:2px 6px;font-size:13px}</style></head><body>"
        f"<h1>MCP client conformance</h1><p>{html.escape(summary_line(results))}</p>"
        + "".join(
            f"<p><b>root cause</b> {html.escape(line)}</p>" for line in root_cause_lines(results)
        )
        + f"<table><tr><th>check</th><th>requirement</th>{head}</tr>{''.join(body)}</table>"
        f"<ul>{details}</ul>{baselined_html(results)}</body></html>\n"
    )


def item_anchor(result_id: str) -> str:
    """The HTML report's anchor of one item (what `mcp-testbench compare` links to)."""
    return result_id


def check_anchor(check_id: str) -> str:
    """The HTML report's anchor of a check's row in the matrix."""
    return f"check-{check_id}"


def _baselined_mark(results: Sequence[Mapping[str, Any]]) -> Callable[[str, str], str]:
    cells = baselined_cells(results)
    return lambda check, column: MARK if (check, column) in cells else ""


def write_reports(results: Sequence[Mapping[str, Any]], path: Path) -> None:
    """Write `results` to `path` in the format its suffix names (.json, .md, .html)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda r: str(r["id"]))
    if path.suffix == ".json":
        text = json.dumps(
            {"format_version": 1, "results": ordered}, indent=2, ensure_ascii=False, default=str
        )
        path.write_text(text + "\n", encoding="utf-8")
    elif path.suffix == ".md":
        path.write_text(_markdown(ordered), encoding="utf-8")
    elif path.suffix == ".html":
        path.write_text(_html(ordered), encoding="utf-8")
    else:
        raise ValueError(f"{path}: unknown report format; use .json, .md or .html")
