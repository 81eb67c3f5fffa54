"""The HTML report in a real browser: headless Chromium loads the file, the filters work,
nothing is wider than the window, no verdict breaks over lines, and a screenshot is saved.

Chromium is Debian's `chromium` package (.ci/run installs it). Without it the test is
skipped, saying so, except under CI=true, where a missing browser is a failure. Each
Chromium is started in a session of its own and that process group is ended when it is
done, so none of its helper processes outlives the test.

    MCP_TESTBENCH_RESULTS=FILE     render this results.json instead of made-up results
    MCP_TESTBENCH_SCREENSHOT=FILE  save the screenshot there (docs/report.png is one)
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from datetime import datetime, timezone
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from _machine import within
from test_report import _every_item

from harness.reports._report import write_reports

pytestmark = pytest.mark.e2e

BOUND = within(60.0)  # seconds for one Chromium run; a page of this size renders in about one
WINDOW = (1280, 900)

# Appended to the test's copy of the report, after the report's own script has applied
# the filters: the widths that tell whether anything sticks out of the window, with every
# folded list open, and how many verdict cells shown break their word over lines ("BLOCK /
# ED"); then the lists fold again, as the page opens (the screenshot).
MEASURE = """<script>
var m = document.querySelector('.matrix');
var folded = Array.prototype.filter.call(document.querySelectorAll('details'),
  function(d){return !d.open;});
folded.forEach(function(d){d.open=true;});
var broken = Array.prototype.filter.call(document.querySelectorAll('.items td.verdict'),
  function(td){var r=document.createRange();r.selectNodeContents(td);
    return r.getClientRects().length>1;}).length;
document.body.setAttribute('data-layout', [document.documentElement.scrollWidth,
  window.innerWidth, m.scrollWidth, m.clientWidth, broken].join(','));
folded.forEach(function(d){d.open=false;});
</script>"""


def _chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    message = "chromium is not installed (Debian package `chromium`; .ci/run installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{message}: under CI the browser test must run")
    pytest.skip(message)


def _browse(
    chromium: str, profile: Path, url: str, *extra: str, size: tuple[int, int] = WINDOW
) -> str:
    """Run one headless Chromium on `url`, bounded; its stdout."""
    argv = [
        chromium,
        "--headless",
        "--no-sandbox",  # as root, as in CI; the page is our own file
        "--disable-gpu",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        f"--window-size={size[0]},{size[1]}",
        *extra,
        url,
    ]
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=BOUND)
    except subprocess.TimeoutExpired:
        out, err = "", f"chromium took more than {BOUND} s"
    finally:
        # The group is the one this Chromium leads (its own session): its helpers too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    assert proc.returncode == 0 or out, f"chromium failed on {url}: {err[-2000:]}"
    return out


class _Dom(HTMLParser):
    """What the filters act on, from the dumped DOM: item rows, matrix rows and matrix
    cells, each with its data attributes and whether it is hidden."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[dict[str, Any]] = []
        self.rows: list[dict[str, Any]] = []
        self.cells: list[dict[str, Any]] = []
        self.layout: list[int] = []
        self._row: dict[str, Any] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        node = {k.removeprefix("data-"): v for k, v in a.items() if k.startswith("data-")}
        node["hidden"] = "hidden" in a
        if tag == "body" and a.get("data-layout"):
            self.layout = [int(n) for n in str(a["data-layout"]).split(",")]
        elif tag == "tr" and "data-verdict" in a:
            self.items.append(node)
        elif tag == "tr" and "data-area" in a:
            node["verdicts"] = []
            self.rows.append(node)
            self._row = node
        elif tag in ("td", "th") and "data-revision" in a:
            self.cells.append(node)
            if tag == "td" and self._row is not None:
                self._row["verdicts"].append(node)


def _dom(text: str) -> _Dom:
    dom = _Dom()
    dom.feed(text)
    return dom


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("browser")
    given = os.environ.get("MCP_TESTBENCH_RESULTS")
    results = (
        json.loads(Path(given).read_text(encoding="utf-8"))["results"] if given else _every_item()
    )
    report = folder / "report.html"
    write_reports(results, report, generated=datetime.now(timezone.utc))
    measured = folder / "measured.html"
    text = report.read_text(encoding="utf-8")
    measured.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    return measured


def _load(chromium: str, page: Path, tmp_path: Path, fragment: str = "", **kw: Any) -> _Dom:
    dom = _dom(
        _browse(chromium, tmp_path / "profile", f"{page.as_uri()}{fragment}", "--dump-dom", **kw)
    )
    assert dom.layout, "the page's script did not run"
    return dom


def test_the_report_fits_the_window_and_every_filter_hides_what_it_should(
    page: Path, tmp_path: Path
) -> None:
    chromium = _chromium()
    whole = _load(chromium, page, tmp_path)
    assert whole.items
    assert whole.rows
    # Unfiltered, everything shows but the SKIP items, which are listed only when asked for.
    assert all(n["hidden"] == (n["verdict"] == "SKIP") for n in whole.items)
    assert not any(n["hidden"] for n in whole.rows + whole.cells)
    page_width, window, matrix_width, matrix_box, broken = whole.layout
    assert window == WINDOW[0]
    assert page_width <= window, f"the page is {page_width}px wide in a {window}px window"
    assert matrix_width <= matrix_box, f"the matrix is cut: {matrix_width}px in {matrix_box}px"
    assert broken == 0, f"{broken} verdict cells break over lines"

    verdicts = sorted({i["verdict"] for i in whole.items})
    transports = sorted({c["transport"] for c in whole.cells})
    revisions = sorted({c["revision"] for c in whole.cells})
    areas = sorted({r["area"] for r in whole.rows})
    assert len(transports) > 1
    assert len(revisions) > 1
    filters = [
        {"verdict": verdicts[0]},
        {"transport": transports[-1]},
        {"revision": revisions[0], "area": areas[0]},
        {"verdict": verdicts[-1], "transport": transports[0], "area": areas[-1]},
        {"skips": "1", "transport": transports[0]},
        {"verdict": "SKIP"},
    ]
    assert "SKIP" in verdicts

    def matches(item: dict[str, Any], chosen: dict[str, str]) -> bool:
        asked = item["verdict"] != "SKIP" or "skips" in chosen or chosen.get("verdict") == "SKIP"
        return asked and all(item[k] == v for k, v in chosen.items() if k != "skips")

    for chosen in filters:
        fragment = "#" + "&".join(f"{k}={v}" for k, v in chosen.items())
        dom = _load(chromium, page, tmp_path, fragment)
        # Items: shown exactly when every chosen filter matches (a SKIP: and was asked for).
        for item in dom.items:
            assert item["hidden"] != matches(item, chosen), (fragment, item)
        assert any(not i["hidden"] for i in dom.items) or not any(
            matches(i, chosen) for i in whole.items
        )
        # Matrix columns: by revision and transport.
        for cell in dom.cells:
            keep = all(cell[k] == chosen[k] for k in ("revision", "transport") if k in chosen)
            assert cell["hidden"] != keep, (fragment, cell)
        # Matrix rows: by area, and by a visible cell of the chosen verdict.
        for row in dom.rows:
            keep = chosen.get("area", row["area"]) == row["area"]
            if "verdict" in chosen:
                keep = keep and any(
                    not c["hidden"] and c["verdict"] == chosen["verdict"] for c in row["verdicts"]
                )
            assert row["hidden"] != keep, (fragment, row)
        assert any(n["hidden"] for n in dom.items + dom.rows + dom.cells), fragment


def test_nothing_sticks_out_of_a_narrow_window(page: Path, tmp_path: Path) -> None:
    """A window narrower than the matrix: the matrix scrolls in its box, the page does not."""
    dom = _load(_chromium(), page, tmp_path, size=(500, 900))
    page_width, window, matrix_width, matrix_box, broken = dom.layout
    assert window == 500
    if not os.environ.get("MCP_TESTBENCH_RESULTS"):  # the made-up results have every column
        assert matrix_width > matrix_box, "the matrix fits: this window is not narrow enough"
    assert page_width <= window, f"the page is {page_width}px wide in a {window}px window"
    assert broken == 0, f"{broken} verdict cells break over lines (BLOCK / ED)"


def test_a_screenshot_of_the_report(page: Path, tmp_path: Path) -> None:
    target = Path(os.environ.get("MCP_TESTBENCH_SCREENSHOT") or tmp_path / "report.png")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    _browse(
        _chromium(),
        tmp_path / "profile",
        page.as_uri(),
        f"--screenshot={target.resolve()}",
        size=(1280, 1400),
    )
    data = target.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 20_000  # a rendered page, not a blank one


def test_a_missing_chromium_skips_outside_ci_and_fails_under_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium is not installed"):
        _chromium()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI the browser test must run"):
        _chromium()
