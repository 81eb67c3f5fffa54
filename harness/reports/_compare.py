"""`mcp-testbench compare`: several clients side by side, from their JSON reports.

Clients are columns, checks are rows grouped by area (the first part of a check id). A
cell is the worst verdict among that client's items of the check (as in a report's matrix)
and, when the items disagree, how many of them had it ("FAIL 2/18"). Each cell links to
its evidence: the item's anchor in that client's own HTML report, `<report>.html` beside
the JSON one, or `report.html` beside a `results.json` (the folder `mcp-testbench run`
writes). When there is none, it is written from the JSON beside the page asked for (never
beside the JSON, where nobody asked for a file), so every link resolves.

A column is named after its client and version; two reports of one client (two runs) are
told apart by what differs in their paths: `tiny 0.0.1 (before)` and `tiny 0.0.1 (after)`
for before/results.json and after/results.json.

The HTML page is one self-contained file (inline style, script and data) whose revision
and transport filters recompute the cells in the browser; the markdown table shows all
revisions and transports.
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.reports._report import (
    check_anchor,
    check_levels,
    item_anchor,
    summary_line,
    write_reports,
)

__all__ = [
    "Column",
    "compare_pages",
    "load_column",
    "render_html",
    "render_markdown",
    "slug",
    "told_apart",
]

# Worst first, as in the reports' matrix.
_ORDER = ("FAIL", "BLOCKED", "WARN", "NOTE", "PASS", "N/A", "SKIP")
_AREAS = ("lifecycle", "jsonrpc", "tools", "features", "stdio", "http", "sse-legacy", "stateless")
_COLOURS = {
    "PASS": "#c8f7c5",
    "FAIL": "#f7c5c5",
    "BLOCKED": "#e7b5e7",
    "WARN": "#f7ecc5",
    "NOTE": "#d7eef7",
    "N/A": "#f4f4f4",
    "SKIP": "#e8e8e8",
}


@dataclass(frozen=True)
class Column:
    label: str
    results: list[dict[str, Any]]
    evidence: Path
    """That client's HTML report, whose anchors the cells link to."""


def load_column(report: Path, results: list[dict[str, Any]]) -> Column:
    clients = sorted({str(r["client"]) for r in results if r.get("client")})
    label = ", ".join(clients) or report.stem
    evidence = report.with_suffix(".html")
    run_folder = report.parent / "report.html"  # `mcp-testbench run`'s report folder
    if not evidence.exists() and report.name == "results.json" and run_folder.exists():
        evidence = run_folder
    return Column(label, results, evidence)


def _made() -> str:
    """Which suite judged, and when: a comparison is only as recent as its runs."""
    from mock_servers import package_version

    return f"mcp-testbench {package_version()}, {datetime.now(timezone.utc):%Y-%m-%d}"


def _area(check_id: str) -> str:
    return check_id.split(".", 1)[0]


def _area_key(area: str) -> tuple[int, str]:
    return (_AREAS.index(area) if area in _AREAS else len(_AREAS), area)


def _rows(columns: Sequence[Column]) -> list[tuple[str, str, str]]:
    """(area, check, "MUST LC-1") for every check any client was judged on."""
    levels = check_levels([r for column in columns for r in column.results])
    ordered = sorted(levels, key=lambda c: (_area_key(_area(c)), c))
    return [(_area(check), check, levels[check].strip()) for check in ordered]


def _cell(items: Sequence[Mapping[str, Any]]) -> tuple[str, str, str | None]:
    """(text, worst status, the anchor of a worst item, or None for a row link)."""
    if not items:
        return "", "", None
    worst = min((str(r["status"]) for r in items), key=_ORDER.index)
    with_worst = [r for r in items if r["status"] == worst]
    text = worst if len(with_worst) == len(items) else f"{worst} {len(with_worst)}/{len(items)}"
    anchor = None if worst in ("PASS", "SKIP") else item_anchor(str(with_worst[0]["id"]))
    return text, worst, anchor


def _page(column: Column, out_dir: Path) -> str:
    """The client's HTML report, relative to the page that links to it."""
    return Path(os.path.relpath(column.evidence.resolve(), out_dir.resolve())).as_posix()


def _href(column: Column, out_dir: Path, check: str, anchor: str | None) -> str:
    return f"{_page(column, out_dir)}#{anchor or check_anchor(check)}"


def render_markdown(columns: Sequence[Column], out_dir: Path) -> str:
    out = [
        "# MCP clients compared",
        "",
        "Each cell is the worst verdict among the client's items of the check, over every "
        "revision and transport (`FAIL 2/18`: 2 of its 18 items failed); it links to the "
        "evidence in that client's report. Filters by revision and transport are in the "
        "HTML version of this page.",
        "",
        *[f"- **{c.label}**: {summary_line(c.results).split(': ', 2)[-1]}" for c in columns],
        "",
        f"Made by {_made()}.",
        "",
    ]
    for area in dict.fromkeys(area for area, _, _ in _rows(columns)):
        out += [f"## {area}", ""]
        out.append("| check | requirement | " + " | ".join(c.label for c in columns) + " |")
        out.append("|---|---|" + "---|" * len(columns))
        for row_area, check, level in _rows(columns):
            if row_area != area:
                continue
            cells = []
            for column in columns:
                text, _, anchor = _cell([r for r in column.results if r["check"] == check])
                cells.append(f"[{text}]({_href(column, out_dir, check, anchor)})" if text else "-")
            out.append(f"| {check} | {level} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


_SCRIPT = """
const data = JSON.parse(document.getElementById("data").textContent);
const order = ["FAIL", "BLOCKED", "WARN", "NOTE", "PASS", "N/A", "SKIP"];
function render() {
  const rev = document.getElementById("revision").value;
  const tr = document.getElementById("transport").value;
  for (const row of data.rows) {
    let shown = false;
    row.cells.forEach((items, i) => {
      const td = document.getElementById(row.id + "/" + i);
      const chosen = items.filter(([r, t]) => (!rev || r === rev) && (!tr || t === tr));
      td.textContent = "";
      td.style.background = "";
      if (!chosen.length) return;
      shown = true;
      const worst = order.find((s) => chosen.some((it) => it[2] === s));
      const many = chosen.filter((it) => it[2] === worst);
      const a = document.createElement("a");
      a.textContent = many.length === chosen.length ? worst : `${worst} ${many.length}/${chosen.length}`;
      const anchor = worst === "PASS" || worst === "SKIP" ? row.anchor : many[0][3];
      a.href = data.columns[i].page + "#" + anchor;
      td.appendChild(a);
      td.style.background = data.colours[worst];
    });
    document.getElementById(row.id).hidden = !shown;
  }
  for (const head of document.querySelectorAll("tr.area")) {
    const rows = data.rows.filter((r) => r.area === head.dataset.area);
    head.hidden = rows.every((r) => document.getElementById(r.id).hidden);
  }
}
// ?revision=...&transport=... chooses the filters on load: a link can show one view.
const params = new URLSearchParams(location.search);
for (const name of ["revision", "transport"]) {
  const select = document.getElementById(name);
  if ([...select.options].some((o) => o.value === params.get(name))) select.value = params.get(name);
  select.addEventListener("change", render);
}
render();
"""

_STYLE = (
    "body{font-family:sans-serif;margin:1em}table{border-collapse:collapse}"
    "td,th{border:1px solid #999;padding:2px 6px;font-size:13px;text-align:left}"
    "tr.area th{background:#ddd;font-size:15px}td a{color:#000;text-decoration:none}"
    "td a:hover{text-decoration:underline}label{margin-right:1em}"
)


def render_html(columns: Sequence[Column], out_dir: Path) -> str:
    rows = _rows(columns)
    revisions = sorted({str(r["revision"]) for c in columns for r in c.results})
    transports = sorted({str(r["transport"]) for c in columns for r in c.results})
    data: dict[str, Any] = {
        "colours": _COLOURS,
        "columns": [{"label": c.label, "page": _page(c, out_dir)} for c in columns],
        "rows": [],
    }
    body: list[str] = []
    current = None
    for area, check, level in rows:
        if area != current:
            current = area
            body.append(
                f'<tr class="area" data-area="{html.escape(area)}">'
                f'<th colspan="{len(columns) + 2}">{html.escape(area)}</th></tr>'
            )
        row_id = f"row-{check}"
        cells_data = []
        tds = []
        for i, column in enumerate(columns):
            items = [r for r in column.results if r["check"] == check]
            cells_data.append(
                [
                    [r["revision"], r["transport"], r["status"], item_anchor(str(r["id"]))]
                    for r in items
                ]
            )
            text, worst, anchor = _cell(items)
            link = (
                f'<a href="{html.escape(_href(column, out_dir, check, anchor))}">{text}</a>'
                if text
                else ""
            )
            style = f' style="background:{_COLOURS[worst]}"' if worst else ""
            tds.append(f'<td id="{html.escape(row_id)}/{i}"{style}>{link}</td>')
        data["rows"].append(
            {"id": row_id, "area": area, "anchor": check_anchor(check), "cells": cells_data}
        )
        body.append(
            f'<tr id="{html.escape(row_id)}"><th>{html.escape(check)}</th>'
            f"<td>{html.escape(level)}</td>{''.join(tds)}</tr>"
        )

    def select(name: str, values: Sequence[str]) -> str:
        options = "".join(
            f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in values
        )
        return (
            f'<label>{name} <select id="{name}"><option value="">all</option>{options}'
            "</select></label>"
        )

    head = "".join(f"<th>{html.escape(c.label)}</th>" for c in columns)
    summaries = "".join(f"<li>{html.escape(summary_line(c.results))}</li>" for c in columns)
    # "</" cannot end the script element early: the data is JSON with "<" escaped.
    blob = json.dumps(data, ensure_ascii=False).replace("<", "\\u003c")
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        "<title>MCP clients compared</title>"
        f"<style>{_STYLE}</style></head><body>"
        "<h1>MCP clients compared</h1>"
        "<p>Each cell is the worst verdict among the client's items of the check (FAIL 2/18: "
        "2 of its 18 items failed), for the revision and transport chosen; it links to the "
        "evidence in that client's report.</p>"
        f"<ul>{summaries}</ul><p>Made by {html.escape(_made())}.</p>"
        f"<p>{select('revision', revisions)}{select('transport', transports)}</p>"
        f"<table><thead><tr><th>check</th><th>requirement</th>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
        f'<script type="application/json" id="data">{blob}</script>'
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


def told_apart(paths: Sequence[Path]) -> list[str]:
    """What tells reports apart, each as short as it can be: the parts of their paths
    (without `.json`) that differ, `a` and `a-http` for in/a.json and in/a-http.json,
    `before` and `after` for before/results.json and after/results.json."""
    parts = [path.resolve().with_suffix("").parts for path in paths]
    shortest = min(len(p) for p in parts)
    head = 0
    while head < shortest - 1 and len({p[head] for p in parts}) == 1:
        head += 1
    tail = 0  # a common end (`results`) goes too, unless a path would be left with nothing
    while (
        tail < shortest - head - 1
        and len({p[-1 - tail] for p in parts}) == 1
        and all(len(p) - head - tail > 1 for p in parts)
    ):
        tail += 1
    return ["/".join(p[head : len(p) - tail]) for p in parts]


def _labels_unique(columns: list[Column], paths: Sequence[Path]) -> list[Column]:
    """Columns of one client (two runs of it) get what tells their reports apart."""
    by_label: dict[str, list[int]] = {}
    for i, column in enumerate(columns):
        by_label.setdefault(column.label, []).append(i)
    labels = [column.label for column in columns]
    for label, indexes in by_label.items():
        if len(indexes) > 1:
            for i, apart in zip(indexes, told_apart([paths[i] for i in indexes]), strict=True):
                labels[i] = f"{label} ({apart})"
    return [
        dataclasses.replace(column, label=label)
        for column, label in zip(columns, labels, strict=True)
    ]


def compare_pages(
    reports: Sequence[tuple[Path, list[dict[str, Any]]]],
    html_out: Path | None,
    markdown_out: Path | None,
) -> list[str]:
    """Write the pages asked for, and the evidence pages they link to that were missing
    (beside the first page); return what was written, one line each."""
    paths = [path for path, _ in reports]
    if len({path.resolve() for path in paths}) < len(paths):
        twice = next(p for p in paths if sum(q.resolve() == p.resolve() for q in paths) > 1)
        raise ValueError(f"{twice} is given twice; give each report once")
    columns = _labels_unique([load_column(path, results) for path, results in reports], paths)
    pages = [out for out in (html_out, markdown_out) if out is not None]
    if not pages:
        return []
    lines = []
    for i, column in enumerate(columns):
        if not column.evidence.exists():
            name = re.sub(r"[^A-Za-z0-9._-]+", "-", column.label).strip("-.") or "client"
            evidence = pages[0].parent / f"{pages[0].stem}-{name}.html"
            columns[i] = column = dataclasses.replace(column, evidence=evidence)
            write_reports(column.results, column.evidence)
            lines.append(f"wrote {column.evidence} (the evidence {column.label}'s cells link to)")
    for out, render in ((html_out, render_html), (markdown_out, render_markdown)):
        if out is None:
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render(columns, out.parent), encoding="utf-8")
        lines.append(f"wrote {out}")
    return lines


def slug(spec: str) -> str:
    """A file name for a client: `mypkg.testing:make_client` -> `make_client`,
    `node examples/drivers/typescript-sdk/driver.mjs` -> `typescript-sdk-driver`."""
    words = spec.split()
    if len(words) == 1 and ":" in spec:
        name = spec.rpartition(":")[2]
    else:
        last = Path(words[-1] if words else "client")
        name = f"{last.parent.name}-{last.stem}" if last.parent.name else last.stem
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "client"
