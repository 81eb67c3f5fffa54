"""Reports: per-check JSON, a markdown and an HTML matrix, and a summary line."""

from __future__ import annotations

import html
import json
import re
import textwrap
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple

from harness.reports._baseline_report import (
    MARK,
    baselined_cells,
    baselined_count,
    baselined_html,
    baselined_markdown,
)
from mock_servers import package_version

__all__ = [
    "INTERRUPTED_NOTE",
    "LEGEND",
    "WIDTH",
    "RootCauseLine",
    "area",
    "check_anchor",
    "check_levels",
    "format_evidence",
    "item_anchor",
    "matrix",
    "root_anchor",
    "root_cause_lines",
    "root_causes",
    "summary_line",
    "terminal_summary",
    "wrap",
    "write_reports",
]

# Worst first: a cell of the matrix shows the worst verdict among its items (a check
# seen to pass in one scenario of a column and not applicable in another passed there).
_ORDER = ("FAIL", "BLOCKED", "WARN", "NOTE", "PASS", "N/A", "SKIP")
_MEANS = {
    "FAIL": "a MUST violated",
    "BLOCKED": "not judged, a precondition failed (see its root cause)",
    "WARN": "a SHOULD violated",
    "NOTE": "seen otherwise where the spec says MAY or nothing (never fails)",
    "PASS": "seen, and right",
    "N/A": "the condition never arose",
    "SKIP": "the client declared it does not support what the check needs",
}
_MARK = {
    "PASS": "PASS",
    "FAIL": "FAIL",
    "WARN": "WARN",
    "NOTE": "note",
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


class RootCauseLine(NamedTuple):
    """One defect to fix first: the root cause, its own verdict in the run, how many items
    it blocks, and why, in the same words in every report. Where one defect is the root
    cause of several checks (a client that answers no server request breaks one
    requirement per kind of request), it is one line: `root` the check that blocks most,
    `checks` all of them."""

    root: str
    verdict: str
    items: int
    reason: str
    checks: tuple[str, ...] = ()
    """Every root cause this line stands for, `root` first ((root,) when one)."""

    @property
    def line(self) -> str:
        """`<root> <verdict> blocks N items: <reason>`, as every report prints it."""
        plural = "s" if self.items != 1 else ""
        return f"{self.root} {self.verdict} blocks {self.items} item{plural}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "checks": list(self.checks or (self.root,)),
            "verdict": self.verdict,
            "items": self.items,
            "reason": self.reason,
        }


def root_causes(results: Sequence[Mapping[str, Any]]) -> list[RootCauseLine]:
    """What to fix first, one line per defect, most blocking first (then by name): the one
    source of the root causes of every report. A root's verdict is its worst in this run
    (a check), FAIL (the client itself failed: `client.<operation>`), or "not judged" (a
    check no item of this selection judged). Its reason is the cause's own words as its
    blocked items give them; where runs put them differently (one refused 2 requests,
    another 3), the words most of them give, the first item's by id on a tie: the same
    results give the same line, in whatever order they come. Roots whose items name one
    defect (`defect.kind`) are one line, which says the defect once, with every instance,
    what it made fail, and the other checks it fails."""
    ordered = sorted(results, key=lambda r: str(r["id"]))
    reasons: dict[str, Counter[str]] = {}
    defects: dict[str, list[Mapping[str, Any]]] = {}
    for r in ordered:
        if r["status"] == "BLOCKED":
            root = str(r["root"])
            reasons.setdefault(root, Counter())[_cause_reason(str(r["reason"]), root)] += 1
            if isinstance(r.get("defect"), Mapping):
                defects.setdefault(root, []).append(r["defect"])
    own: dict[str, str] = {}
    for r in ordered:
        current = own.get(str(r["check"]))
        status = str(r["status"])
        if current is None or _ORDER.index(status) < _ORDER.index(current):
            own[str(r["check"])] = status

    def verdict_of(root: str) -> str:
        return own.get(root, "FAIL" if root.startswith("client.") else "not judged")

    groups: dict[str, list[str]] = {}
    for root in reasons:
        # A root is one defect's when every item it blocks says so.
        kinds = {str(d.get("kind")) for d in defects.get(root, [])}
        one = len(kinds) == 1 and len(defects[root]) == sum(reasons[root].values())
        groups.setdefault(f"defect:{kinds.pop()}" if one else root, []).append(root)
    rows = []
    for key, roots in groups.items():
        roots.sort(key=lambda root: (-sum(reasons[root].values()), root))
        items = sum(sum(reasons[root].values()) for root in roots)
        if len(roots) == 1 or not key.startswith("defect:"):
            reason = reasons[roots[0]].most_common(1)[0][0]
        else:
            reason = _defect_reason([d for root in roots for d in defects[root]], roots)
        worst = min((verdict_of(root) for root in roots), key=_verdict_rank)
        rows.append(RootCauseLine(roots[0], worst, items, reason, tuple(roots)))
    return sorted(rows, key=lambda row: (-row.items, row.root))


def _verdict_rank(verdict: str) -> int:
    return _ORDER.index(verdict) if verdict in _ORDER else len(_ORDER)


def _defect_reason(instances: Sequence[Mapping[str, Any]], roots: Sequence[str]) -> str:
    """One defect's words: what it is, each instance, what it made fail, and the other
    checks it fails, each named once in the order first seen."""
    abouts = list(dict.fromkeys(str(d.get("about")) for d in instances))
    thens = list(dict.fromkeys(str(d.get("then")) for d in instances))
    says = str(instances[0].get("says"))
    others = ", ".join(roots[1:])
    return f"{says} ({', '.join(abouts)}), so {'; '.join(thens)}; the same defect fails {others}"


# How harness/judging/_judge.py words a BLOCKED item's reason: "blocked by ROOT: WHY",
# or, for a check whose trigger never came, "not judged: this never happened: WHAT; the
# cause: WHY" (tests/harness/reports/test_report.py holds the two to each other).
_BLOCKED_BY = "blocked by {root}: "
_NEVER_HAPPENED = "not judged: this never happened: "
_THE_CAUSE = "; the cause: "


def _cause_reason(reason: str, root: str) -> str:
    """The root cause's own words in a BLOCKED item's reason."""
    direct = _BLOCKED_BY.format(root=root)
    if reason.startswith(direct):
        return reason[len(direct) :]
    if reason.startswith(_NEVER_HAPPENED) and _THE_CAUSE in reason:
        return reason.split(_THE_CAUSE, 1)[1]
    return reason.removeprefix("not judged: ")


def root_cause_lines(results: Sequence[Mapping[str, Any]]) -> list[str]:
    return [root.line for root in root_causes(results)]


WIDTH = 100
"""The terminal summary fits this many columns."""

LEGEND = (
    f"legend: FAIL {_MEANS['FAIL']} | BLOCKED {_MEANS['BLOCKED']}",
    f"        WARN {_MEANS['WARN']} | PASS {_MEANS['PASS']} | N/A {_MEANS['N/A']}",
    f"        NOTE {_MEANS['NOTE']}",
    f"        SKIP {_MEANS['SKIP']}",
)


def wrap(
    text: str, width: int = WIDTH, hang: int = 4, *, break_long_words: bool = True
) -> list[str]:
    """`text` in lines of at most `width` columns, never cut: broken between words, the
    lines after the first indented `hang` more than it. A word longer than a line is
    broken where the line ends, or, without `break_long_words`, left whole on a line of
    its own (a link stays one that a terminal can open)."""
    lead = text[: len(text) - len(text.lstrip(" "))]
    # A duration ("10.0 s", "6 min 45 s") or a `code span` is one word: never "10.0" at
    # a line's end and "s" on the next.
    glued = _UNBROKEN.sub(lambda m: m.group(0).replace(" ", "\0"), text.strip())
    lines = textwrap.wrap(
        glued,
        width,
        initial_indent=lead,
        subsequent_indent=lead + " " * hang,
        break_long_words=break_long_words,
        break_on_hyphens=False,
    )
    return [line.replace("\0", " ") for line in lines] or [text]


_UNBROKEN = re.compile(r"`[^`]*`|\b\d+(?:\.\d+)? (?:min \d+ )?s\b")


def _fit(head: str, parts: Sequence[str], width: int = WIDTH) -> str:
    """`head` and as many of `parts` as fit in `width` columns, then "+N more"."""
    line = head
    for index, part in enumerate(parts):
        rest = len(parts) - index - 1
        more = f", +{rest} more" if rest else ""
        candidate = f"{line}{', ' if line != head else ''}{part}"
        if len(candidate + more) > width:
            return f"{line}{', ' if line != head else ''}+{len(parts) - index} more"
        line = candidate
    return line


def _area_table(results: Sequence[Mapping[str, Any]]) -> list[str]:
    by_area: dict[str, Counter[str]] = {}
    checks: dict[str, set[str]] = {}
    for r in results:
        name = area(str(r["check"]))
        by_area.setdefault(name, Counter())[str(r["status"])] += 1
        checks.setdefault(name, set()).add(str(r["check"]))
    width = max([len(a) for a in by_area] + [5])
    lines = [f"{'area':<{width}}  checks" + "".join(f"{s:>9}" for s in _ORDER)]
    for name in sorted(by_area):
        lines.append(
            f"{name:<{width}}  {len(checks[name]):>6}"
            + "".join(f"{by_area[name][s] or '-':>9}" for s in _ORDER)
        )
    total: Counter[str] = sum(by_area.values(), Counter())
    lines.append(
        f"{'all':<{width}}  {sum(len(c) for c in checks.values()):>6}"
        + "".join(f"{total[s] or '-':>9}" for s in _ORDER)
    )
    return lines


_STRENGTH = ("none", "MAY", "SHOULD", "MUST")


def _strength(level: str) -> int:
    return _STRENGTH.index(level) if level in _STRENGTH else len(_STRENGTH)


def check_levels(results: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each check's level and requirements as its row shows them: "MUST LC-1", or
    "SHOULD/MUST LC-2" where the spec's word differs between the revisions or branches
    judged (the level is the clause's at each revision: harness/judging/_catalogue.py)."""
    seen: dict[str, set[str]] = {}
    requirements: dict[str, str] = {}
    for r in results:
        seen.setdefault(str(r["check"]), set()).add(str(r.get("level", "")))
        requirements[str(r["check"])] = ", ".join(r.get("requirements", []))
    return {
        check: " ".join(
            part
            for part in (
                "/".join(sorted(levels, key=_strength)),
                requirements[check],
            )
            if part
        )
        for check, levels in seen.items()
    }


def _failing_checks(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per check that FAILs or WARNs somewhere, worst first, naming where (the
    revision and the transport as the flags spell them). BLOCKED items are summed up by
    their root causes instead."""
    where: dict[tuple[str, str], list[str]] = {}
    levels = check_levels(results)
    for r in results:
        status = str(r["status"])
        if status in ("FAIL", "WARN"):
            column = f"{r['revision']} {r['transport']}"
            places = where.setdefault((status, str(r["check"])), [])
            if column not in places:
                places.append(column)
    lines = []
    for status, check in sorted(where, key=lambda k: (_ORDER.index(k[0]), k[1])):
        head = f"  {status} {check} ({levels[check]}) in "
        lines.append(_fit(head, sorted(where[(status, check)])))
    return lines


def terminal_summary(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the terminal shows at the end of a run, every line at most WIDTH columns:
    the root causes, the items per area and verdict, the checks that FAIL or WARN and
    where, a legend, and the summary line last."""
    if not results:
        return [summary_line(results)]
    lines = []
    roots = root_cause_lines(results)
    if roots:
        lines.append("mcp-testbench: root causes (fix these first):")
        lines += [part for line in roots for part in wrap(f"  {line}")]
    lines += _area_table(results)
    failing = _failing_checks(results)
    if failing:
        lines.append("checks that FAIL or WARN, and where (revision transport):")
        lines += failing
    noted = sorted({str(r["check"]) for r in results if r["status"] == "NOTE"})
    if noted:
        lines.append(_fit("noted, never failing (a MAY, or no sentence binds the client): ", noted))
    lines += LEGEND
    summary = summary_line(results)
    if len(summary) > WIDTH:  # the counts go on a line of their own
        head, _, counts = summary.rpartition(": ")
        lines += [f"{head}:", *wrap(f"  {counts}")]
    else:
        lines.append(summary)
    return lines


def matrix(
    results: Sequence[Mapping[str, Any]],
) -> tuple[list[str], list[tuple[str, str, dict[str, str]]]]:
    """Columns (revision/transport) and rows (check, level, cell per column)."""
    columns = sorted({f"{r['revision']} {r['transport']}" for r in results})
    cells: dict[str, dict[str, str]] = {}
    levels = check_levels(results)
    for r in results:
        column = f"{r['revision']} {r['transport']}"
        row = cells.setdefault(str(r["check"]), {})
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
    out += _markdown_not_passed(results)
    return "\n".join(out) + "\n"


def _markdown_not_passed(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every item that did not pass, worst first, with its requirement and why."""
    shown = [r for r in results if r["status"] != "PASS"]
    if not shown:
        return []
    out = ["", "## Not passed, worst first", ""]
    for r in sorted(shown, key=lambda r: (_ORDER.index(str(r["status"])), str(r["id"]))):
        root = f" (blocked by `{r['root']}`)" if r.get("root") else ""
        out.append(
            f"- **{r['status']}** `{r['id']}` ({r['level']} {', '.join(r['requirements'])}, "
            f"[spec]({r['spec']})){root}: {r['reason']}"
        )
    return out


def _css_name(status: str) -> str:
    return status.replace("/", "").lower()


_COLOURS = {
    "PASS": "#c8f7c5",
    "FAIL": "#f7c5c5",
    "BLOCKED": "#e7b5e7",
    "WARN": "#f7ecc5",
    "NOTE": "#d7eef7",
    "N/A": "#f4f4f4",
    "SKIP": "#e8e8e8",
}

_CSS = """
body{font-family:sans-serif;margin:1em;max-width:100%;box-sizing:border-box}
table{border-collapse:collapse}td,th{border:1px solid #999;padding:2px 6px;font-size:13px}
th{text-align:left}.matrix{overflow-x:auto;max-width:100%}.matrix td{text-align:center}
.items td{vertical-align:top;overflow-wrap:anywhere}.items{width:100%}
.items td.verdict{white-space:nowrap;overflow-wrap:normal}
.roots details{margin:2px 0 6px 1.5em}.roots summary{cursor:pointer}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px;margin:2px 0}
.filters label{margin-right:1em}.meta td,.meta th{border:none;padding:0 1em 0 0}
""" + "".join(f".v-{_css_name(s)}{{background:{c}}}" for s, c in _COLOURS.items())

# Plain JS, no library: the filters hide matrix columns (revision, transport), matrix rows
# (area; verdict: a row stays when one of its visible cells has that verdict) and item
# rows (a SKIP item only when asked for: the box, or the verdict SKIP). Their state lives
# in the URL fragment (#verdict=FAIL&transport=http&skips=1), so a filtered view can be
# linked to, and a headless browser can be pointed at one.
_JS = """
(function(){
var names=['verdict','revision','transport','area'];
var skips=document.getElementById('f-skips');
function state(){var s={};names.forEach(function(n){s[n]=document.getElementById('f-'+n).value;});
  s.skips=skips&&skips.checked?'1':'';return s;}
function keep(el,s,keys){return keys.every(function(k){return !s[k]||el.dataset[k]===s[k];});}
function apply(){
  var s=state();
  document.querySelectorAll('.matrix [data-revision]').forEach(function(c){
    c.hidden=!keep(c,s,['revision','transport']);});
  document.querySelectorAll('.matrix tr[data-area]').forEach(function(r){
    var shown=!s.area||r.dataset.area===s.area;
    if(shown&&s.verdict){shown=Array.prototype.some.call(r.querySelectorAll('td[data-verdict]'),
      function(c){return !c.hidden&&c.dataset.verdict===s.verdict;});}
    r.hidden=!shown;});
  var n=0;
  document.querySelectorAll('.items tr[data-verdict]').forEach(function(r){
    var asked=r.dataset.verdict!=='SKIP'||s.skips||s.verdict==='SKIP';
    r.hidden=!(asked&&keep(r,s,names));if(!r.hidden){n++;}});
  var shown=document.getElementById('shown');if(shown){shown.textContent=n;}
  var parts=names.concat(['skips']).filter(function(k){return s[k];}).map(function(k){
    return k+'='+encodeURIComponent(s[k]);});
  history.replaceState(null,'',parts.length?'#'+parts.join('&'):location.pathname+location.search);
}
function load(){
  location.hash.replace(/^#/,'').split('&').forEach(function(p){
    var kv=p.split('='),el=document.getElementById('f-'+kv[0]);
    if(el&&kv.length===2){if(el.type==='checkbox'){el.checked=kv[1]==='1';}
      else{el.value=decodeURIComponent(kv[1]);}}});
}
names.forEach(function(n){document.getElementById('f-'+n).addEventListener('change',apply);});
if(skips){skips.addEventListener('change',apply);}
load();apply();
})();
"""


def area(check_id: str) -> str:
    """The area of a check: its id up to the first dot (`http.session-id-echoed` is http)."""
    return check_id.split(".", 1)[0]


def _e(value: Any) -> str:
    return html.escape(str(value))


def _html_meta(results: Sequence[Mapping[str, Any]], generated: datetime) -> str:
    clients = sorted({str(r.get("client")) for r in results if r.get("client")})
    rows = [
        ("client", ", ".join(clients) or "none ran"),
        ("suite", f"mcp-testbench {package_version()}"),
        ("date", generated.strftime("%Y-%m-%d %H:%M:%S UTC")),
    ]
    cells = "".join(f"<tr><th>{name}</th><td>{_e(value)}</td></tr>" for name, value in rows)
    return f'<table class="meta">{cells}</table><p>{_e(summary_line(results))}</p>'


def _html_roots(results: Sequence[Mapping[str, Any]]) -> str:
    """The root causes, each with the items it blocks folded under it, and a link to its
    check's row in the matrix."""
    roots = root_causes(results)
    if not roots:
        return ""
    checks = {str(r["check"]) for r in results}
    blocked: dict[str, list[Mapping[str, Any]]] = {}
    for r in _worst_first(results):
        if r["status"] == "BLOCKED":
            blocked.setdefault(str(r["root"]), []).append(r)
    lines = []
    for root in roots:
        # The same words as root.line, with each check it names linked to its row.
        line = _e(root.line)
        for name in sorted(set(root.checks or (root.root,)) & checks, key=len, reverse=True):
            line = re.sub(
                rf"(?<![\w.-]){re.escape(_e(name))}(?![\w-])",
                f'<a href="#{_e(check_anchor(name))}">{_e(name)}</a>',
                line,
                count=1,
            )
        items = [r for name in root.checks or (root.root,) for r in blocked.get(name, [])]
        lines.append(
            f'<li id="{_e(root_anchor(root.root))}"><b>root cause</b> {line}'
            f"<details><summary>{_blocks(root.items)}</summary>"
            f"{_items_table(_worst_first(items))}</details></li>"
        )
    return f'<h2>Root causes (fix these first)</h2><ul class="roots">{"".join(lines)}</ul>'


def _blocks(items: int) -> str:
    return "the item it blocks" if items == 1 else f"the {items} items it blocks"


def _html_filters(results: Sequence[Mapping[str, Any]]) -> str:
    options = {
        "verdict": [s for s in _ORDER if any(r["status"] == s for r in results)],
        "revision": sorted({str(r["revision"]) for r in results}),
        "transport": sorted({str(r["transport"]) for r in results}),
        "area": sorted({area(str(r["check"])) for r in results}),
    }
    selects = "".join(
        f'<label>{name} <select id="f-{name}"><option value="">all</option>'
        + "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
        + "</select></label>"
        for name, values in options.items()
    )
    skipped = sum(1 for r in results if r["status"] == "SKIP")
    if skipped:
        selects += (
            f'<label><input type="checkbox" id="f-skips"> list the {skipped} SKIP '
            f"item{'s' if skipped != 1 else ''}</label>"
        )
    return f'<p class="filters">{selects}</p>'


def _html_matrix(results: Sequence[Mapping[str, Any]]) -> str:
    columns, rows = matrix(results)
    split = [tuple(c.split(" ", 1)) for c in columns]
    revisions = sorted({rev for rev, _ in split})
    top = "".join(
        f'<th colspan="{sum(1 for r, _ in split if r == rev)}">{_e(rev)}</th>' for rev in revisions
    )
    # Column headers carry the same data as their cells, so a filter hides them alike.
    sub = "".join(
        f'<th data-revision="{_e(rev)}" data-transport="{_e(tr)}">{_e(tr)}</th>'
        for rev, tr in split
    )
    body = []
    mark = _baselined_mark(results)
    for check, level, row in rows:
        cells = "".join(
            f'<td class="v-{_css_name(row.get(c) or "")}" data-revision="{_e(rev)}" '
            f'data-transport="{_e(tr)}" data-verdict="{_e(row.get(c) or "")}">'
            f"{_MARK[row.get(c)]}{mark(check, c)}</td>"
            for c, (rev, tr) in zip(columns, split, strict=True)
        )
        body.append(
            f'<tr id="{_e(check_anchor(check))}" data-area="{_e(area(check))}"><th>{_e(check)}</th>'
            f"<td>{_e(level)}</td>{cells}</tr>"
        )
    return (
        '<h2>Matrix</h2><div class="matrix"><table>'
        f'<tr><th rowspan="2">check</th><th rowspan="2">requirement</th>{top}</tr><tr>{sub}</tr>'
        f"{''.join(body)}</table></div>"
    )


def _html_item(r: Mapping[str, Any]) -> str:
    status = str(r["status"])
    why = _e(r["reason"])
    if status == "BLOCKED":
        why = f"<b>blocked by {_e(r.get('root'))}</b>: {why}"
    evidence = ""
    if status in ("FAIL", "WARN", "NOTE", "BLOCKED") and r.get("evidence"):
        lines = format_evidence(r["evidence"])
        opened = " open" if status == "FAIL" else ""  # a FAIL shows its proof at once
        evidence = f"<details{opened}><summary>transcript ({len(lines)})</summary><pre>{_e(chr(10).join(lines))}</pre></details>"
    requirement = f"{r['level']} {', '.join(r['requirements'])}"
    # Where the spec says it: a violation's own clause, in the page's words.
    said = "".join(
        f"<br><small>{_e(c['keyword'])}: &ldquo;{_e(c['phrase'])}&rdquo; ({_e(c['page'])})</small>"
        for c in (r.get("clauses") or [])
        if status in ("FAIL", "WARN", "NOTE") and "keyword" in c
    )
    return (
        f'<tr id="{_e(item_anchor(str(r["id"])))}" class="v-{_css_name(status)}" '
        f'data-verdict="{_e(status)}" '
        f'data-revision="{_e(r["revision"])}" data-transport="{_e(r["transport"])}" '
        f'data-area="{_e(area(str(r["check"])))}">'
        f'<td class="verdict">{_e(status)}</td><td><code>{_e(r["id"])}</code></td>'
        f'<td>{_e(requirement)} (<a href="{_e(r["spec"])}">spec</a>){said}</td>'
        f"<td>{why}{evidence}</td></tr>"
    )


def _worst_first(results: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return sorted(results, key=lambda r: (_ORDER.index(str(r["status"])), str(r["id"])))


def _items_table(items: Sequence[Mapping[str, Any]]) -> str:
    # Automatic layout: long ids break anywhere, so the table never outgrows the page.
    return (
        '<table class="items"><colgroup><col><col style="width:30%"><col style="width:15%">'
        "<col></colgroup>"
        "<tr><th>verdict</th><th>item</th><th>requirement</th><th>why</th></tr>"
        f"{''.join(_html_item(r) for r in items)}</table>"
    )


def _html_items(results: Sequence[Mapping[str, Any]]) -> str:
    """Every item that did not pass, worst first: what to read after the root causes (a
    PASS is a cell of the matrix; its evidence is in the JSON report). A BLOCKED item is
    under its root cause; a SKIP is counted, and listed when asked for."""
    shown = [r for r in results if r["status"] != "PASS"]
    if not shown:
        return "<h2>Every item passed</h2>"
    counts = Counter(str(r["status"]) for r in shown)
    where = []
    if counts["BLOCKED"]:
        where.append(f"{counts['BLOCKED']} BLOCKED under their root causes")
    if counts["SKIP"]:
        where.append(f"{counts['SKIP']} SKIP listed only when asked for")
    said = f" ({'; '.join(where)})" if where else ""
    listed = [r for r in _worst_first(shown) if r["status"] != "BLOCKED"]
    return (
        f"<h2>Not passed: {len(shown)} items, worst first</h2>"
        f'<p><span id="shown">{len(shown) - counts["SKIP"]}</span> shown{_e(said)}</p>'
        + (_items_table(listed) if listed else "")
    )


def _html_legend() -> str:
    marks = "; ".join(f"<b>{_MARK[s]}</b> {_e(_MEANS[s])}" for s in _ORDER)
    return f"<p>{marks}; an empty cell: the check does not apply there.</p>"


def _html(results: Sequence[Mapping[str, Any]], generated: datetime) -> str:
    """One self-contained page: inline CSS and JS, no request to any network."""
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>MCP client conformance</title><style>{_CSS}</style></head><body>"
        "<h1>MCP client conformance</h1>"
        + _html_meta(results, generated)
        + _html_roots(results)
        + _html_filters(results)
        + _html_items(results)
        + _html_matrix(results)
        + _html_legend()
        + baselined_html(results)
        + f"<script>{_JS}</script></body></html>\n"
    )


def item_anchor(result_id: str) -> str:
    """The HTML report's anchor of one item (what `mcp-testbench compare` links to)."""
    return result_id


def check_anchor(check_id: str) -> str:
    """The HTML report's anchor of a check's row in the matrix."""
    return f"check-{check_id}"


def root_anchor(root: str) -> str:
    """The HTML report's anchor of a root cause, its BLOCKED items folded under it."""
    return f"root-{root}"


def _baselined_mark(results: Sequence[Mapping[str, Any]]) -> Callable[[str, str], str]:
    cells = baselined_cells(results)
    return lambda check, column: MARK if (check, column) in cells else ""


#: What a report of an interrupted run says first: it holds only what was judged before.
INTERRUPTED_NOTE = (
    "interrupted: the run was stopped (SIGINT or SIGTERM) before every check was judged; "
    "these are the items judged before it"
)


def write_reports(
    results: Sequence[Mapping[str, Any]],
    path: Path,
    *,
    generated: datetime | None = None,
    interrupted: bool = False,
) -> None:
    """Write `results` to `path` in the format its suffix names (.json, .md, .html);
    `interrupted` marks a run that was stopped before it ended."""
    generated = generated or datetime.now(timezone.utc)
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(results, key=lambda r: str(r["id"]))
    if path.suffix == ".json":
        document: dict[str, Any] = {
            "format_version": 1,
            "root_causes": [root.to_json() for root in root_causes(ordered)],
            "results": ordered,
        }
        if interrupted:
            document["interrupted"] = True
        text = json.dumps(document, indent=2, ensure_ascii=False, default=str)
        path.write_text(text + "\n", encoding="utf-8")
    elif path.suffix == ".md":
        note = f"**{INTERRUPTED_NOTE}**\n\n" if interrupted else ""
        markdown = _markdown(ordered)
        title, _, rest = markdown.partition("\n\n")
        path.write_text(f"{title}\n\n{note}{rest}", encoding="utf-8")
    elif path.suffix == ".html":
        page = _html(ordered, generated)
        if interrupted:
            banner = f'<p class="interrupted"><b>{_e(INTERRUPTED_NOTE)}</b></p>'
            page = page.replace('<table class="meta">', banner + '<table class="meta">', 1)
        path.write_text(page, encoding="utf-8")
    else:
        raise ValueError(f"{path}: unknown report format; use .json, .md or .html")
