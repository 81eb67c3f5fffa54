"""`mcp-testbench baseline write|update FILE`: a baseline from a run or a JSON report.

`write` lists every failing item (FAIL or BLOCKED) of the results under its item id, with
the verdict's reason as a first reason to edit. `update` rewrites an existing baseline to
match the results: an entry keeps its reason while it still matches failing items only; a
check-id entry that now matches passing items too is narrowed to its failing items (same
reason); an entry whose items pass, or that matches no item, goes; new failures are added.
Each change is printed, so a CI log or a review shows what moved.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.reports import FAILING, Baseline, BaselineError, short_id

__all__ = ["CommandError", "baseline_command", "load_results"]

Results = list[dict[str, Any]]


class CommandError(Exception):
    """A problem with the command's input, said in one line (exit status 2)."""


def load_results(path: Path) -> Results:
    """The results of a JSON report written by `--report`/`--mcp-report FILE.json`."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CommandError(f"{path}: no such file") from None
    except ValueError as exc:
        raise CommandError(f"{path}: not valid JSON ({exc})") from None
    results = data.get("results") if isinstance(data, dict) else None
    if (
        not isinstance(results, list)
        or data.get("format_version") != 1
        or not all(isinstance(r, dict) and {"id", "check", "status"} <= set(r) for r in results)
    ):
        raise CommandError(
            f"{path}: not a JSON report of mcp-testbench (write one with "
            "`mcp-testbench run --report FILE.json` or `pytest --mcp-report=FILE.json`)"
        )
    return results


def _first_reason(result: Mapping[str, Any]) -> str:
    reason = " ".join(str(result.get("reason", "")).split())
    reason = reason if len(reason) <= 200 else reason[:197] + "..."
    return f"{result['status']}: {reason}"


def _write_file(path: Path, entries: Mapping[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(
        {"format_version": 1, "expected_failures": dict(sorted(entries.items()))},
        indent=2,
        ensure_ascii=False,
    )
    path.write_text(text + "\n", encoding="utf-8")


def _failing(results: Results) -> dict[str, dict[str, Any]]:
    return {short_id(str(r["id"])): r for r in results if r["status"] in FAILING}


def write(path: Path, results: Results) -> list[str]:
    if path.exists():
        raise CommandError(
            f"{path} already exists; use `mcp-testbench baseline update {path}` to bring it "
            "up to date (it keeps your reasons), or delete it first"
        )
    entries = {item: _first_reason(r) for item, r in _failing(results).items()}
    _write_file(path, entries)
    return [f"wrote {path}: {len(entries)} expected failures from {len(results)} items"]


def update(path: Path, results: Results) -> list[str]:
    if path.suffix in (".yml", ".yaml"):
        raise CommandError(
            f"{path}: update rewrites mcp-testbench's JSON baseline, not the official "
            "runner's YAML; start one with `mcp-testbench baseline write baseline.json`"
        )
    if not path.exists():
        raise CommandError(
            f"{path}: no such file; create it with `mcp-testbench baseline write {path}`"
        )
    try:
        old = Baseline.load(path, option="")  # the file is this command's FILE, no option
    except BaselineError as exc:
        raise CommandError(str(exc)) from None
    failing = _failing(results)
    matched: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        key = old.key_for(str(r["id"]), str(r["check"]))
        if key is not None:
            matched.setdefault(key, []).append(r)
    entries: dict[str, str] = {}
    lines: list[str] = []
    for key, reason in old.entries.items():
        items = matched.get(key, [])
        bad = sorted(short_id(str(r["id"])) for r in items if r["status"] in FAILING)
        if not items:
            lines.append(f"removed {key}: it matches no item of this run")
        elif not bad:
            lines.append(f"removed {key}: it passes now")
        elif len(bad) == len(items):
            entries[key] = reason
        else:
            entries.update({item: reason for item in bad})
            lines.append(
                f"narrowed {key} to {len(bad)} failing item{'s' if len(bad) != 1 else ''} "
                f"({', '.join(bad)})"
            )
    for item, r in sorted(failing.items()):
        if old.key_for(str(r["id"]), str(r["check"])) is None:
            entries[item] = _first_reason(r)
            lines.append(f"added {item}")
    _write_file(path, entries)
    lines.append(f"updated {path}: {len(entries)} expected failures")
    return lines


def baseline_command(
    action: str,
    path: Path,
    source: Path | None,
    run: Callable[[Sequence[Path]], int],
) -> int:
    """`action` is write or update; results from `source` (a JSON report) or, without it,
    from `run`, which runs the suite writing the reports it is given."""
    try:
        if source is not None:
            results = load_results(source)
        else:
            with tempfile.TemporaryDirectory(prefix="mcp-testbench-baseline-") as scratch:
                report = Path(scratch) / "results.json"
                code = run([report])
                if not report.exists():
                    print(
                        "mcp-testbench baseline: the run wrote no results (see above); "
                        "nothing written",
                        file=sys.stderr,
                    )
                    return code or 2
                results = load_results(report)
        lines = (write if action == "write" else update)(path, results)
    except CommandError as exc:
        print(f"mcp-testbench baseline {action}: {exc}", file=sys.stderr)
        return 2
    for line in lines:
        print(f"mcp-testbench baseline: {line}")
    return 0
