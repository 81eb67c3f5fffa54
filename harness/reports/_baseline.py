"""The expected-failures baseline that turns the suite into a regression gate.

    {"format_version": 1,
     "expected_failures": {
       "http.delete-session": "we never send DELETE (issue 12)",
       "tools-call-2025-11-25-stdio::stdio.shutdown-closes-stdin": "kill on exit"}}

A key is a check id (every item of that check) or one item: `<scenario>-<revision>-
<transport>::<check>`, the item's pytest node id without its `mcp-testbench::` prefix.
Listed items are strict xfails: a listed failure is expected (FAIL, or BLOCKED: a blocked
item fails the run like a FAIL), a listed check that now passes fails the run (a stale
entry: the summary names it, `now_passing`, with the `baseline update` command that drops
it), and so does a new failure. N/A and SKIP stay what they are. An entry that
matches no item of the suite as selected fails the run too, so typos do not hide.

The official conformance runner's expected-failures YAML (`.yml`/`.yaml`) is read as well
(harness/official/_expected_failures.py). One of its entries stands for several of our checks, and
like the runner it is stale only when none of them failed, so its items are non-strict
xfails and the staleness is judged per entry at the end (`stale_entries`).
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["FAILING", "Baseline", "BaselineError", "short_id"]

_PREFIX = "mcp-testbench::"
FAILING = ("FAIL", "BLOCKED")
"""The statuses a baseline entry expects."""
_PASSING = ("PASS", "WARN", "NOTE")
"""The statuses that make a listed item a strict xfail's XPASS (N/A and SKIP stay skips)."""


def short_id(nodeid: str) -> str:
    """An item's id as a baseline writes it: its node id without `mcp-testbench::`."""
    return nodeid.removeprefix(_PREFIX)


class BaselineError(ValueError):
    pass


@dataclass(frozen=True)
class Baseline:
    path: Path
    entries: Mapping[str, str]
    """Our key (check id or item id) to the reason shown in the reports."""
    origins: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """For an official YAML: our key to the entries as written that it stands for."""
    notes: tuple[str, ...] = ()
    """What the file holds that stands for nothing here (official ids with no counterpart)."""

    @property
    def official(self) -> bool:
        return bool(self.origins) or self.path.suffix in (".yml", ".yaml")

    @classmethod
    def load(cls, path: Path, *, option: str = "--mcp-baseline") -> Baseline:
        """The baseline in `path`, or a BaselineError that names the file as the user gave
        it: after `option` (`--baseline` for `mcp-testbench run`; "" for none)."""
        where = f"{option} {path}" if option else str(path)
        if not path.is_file():
            raise BaselineError(
                f"{where}: no such file" if not path.exists() else f"{where}: not a file"
            )
        if path.suffix in (".yml", ".yaml"):
            return cls._load_official(path)
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise BaselineError(f"{where}: cannot be read ({exc.strerror or exc})") from None
        except ValueError as exc:
            raise BaselineError(
                f"{where}: not valid JSON ({exc}); a baseline is JSON, "
                "or the official runner's expected-failures YAML named .yml or .yaml"
            ) from None
        if not isinstance(data, dict) or data.get("format_version") != 1:
            raise BaselineError(
                f'{where}: expected {{"format_version": 1, "expected_failures": {{...}}}}'
            )
        entries = data.get("expected_failures")
        if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
            raise BaselineError(
                f'{where}: "expected_failures" must map check ids or item ids to reasons'
            )
        return cls(path, entries)

    @classmethod
    def _load_official(cls, path: Path) -> Baseline:
        from harness.official import OfficialBaselineError, load_official

        try:
            official = load_official(path)
        except OfficialBaselineError as exc:
            raise BaselineError(str(exc)) from None
        entries: dict[str, str] = {}
        origins: dict[str, tuple[str, ...]] = {}
        for written, checks in official.entries.items():
            for check_id in checks:
                origins[check_id] = (*origins.get(check_id, ()), written)
                entries[check_id] = f"official baseline: {', '.join(origins[check_id])}"
        return cls(path, entries, origins, official.notes)

    def key_for(self, nodeid: str, check_id: str) -> str | None:
        """The entry that lists this item, if any: its item id first, else its check id."""
        short = short_id(nodeid)
        if short in self.entries:
            return short
        return check_id if check_id in self.entries else None

    def reason_for(self, nodeid: str, check_id: str) -> str | None:
        key = self.key_for(nodeid, check_id)
        return None if key is None else self.entries[key]

    def strict(self, key: str) -> bool:
        """Whether the items of an entry are strict xfails (each one failing, or the run
        fails). An official entry is judged as a whole instead (`stale_entries`)."""
        return key not in self.origins

    def _written(self, keys: Iterable[str]) -> set[str]:
        return {origin for key in keys for origin in self.origins.get(key, (key,))}

    def match(self, node_ids: Iterable[tuple[str, str]]) -> tuple[dict[str, str], list[str]]:
        """For (node id, check id) pairs: the reason of each listed item, by node id, and
        the entries (as written in the file) that matched nothing."""
        used: set[str] = set()
        reasons: dict[str, str] = {}
        for nodeid, check_id in node_ids:
            key = self.key_for(nodeid, check_id)
            if key is None:
                continue
            used.add(key)
            reasons[nodeid] = self.entries[key]
        return reasons, sorted(self._written(self.entries) - self._written(used))

    def stale_entries(self, results: Sequence[Mapping[str, Any]]) -> list[str]:
        """The official entries whose items were all judged and none failed: fixed, so the
        entry should go (the runner's rule). Strict entries fail item by item instead."""
        seen: set[str] = set()
        failed: set[str] = set()
        for result in results:
            key = self.key_for(str(result["id"]), str(result["check"]))
            if key is None or self.strict(key):
                continue
            written = self._written([key])
            if result["status"] in FAILING:
                failed |= written
            elif result["status"] in _PASSING:
                seen |= written
        return sorted(seen - failed)

    def now_passing(self, results: Sequence[Mapping[str, Any]]) -> list[tuple[str, int, int]]:
        """The strict entries with items that passed (pytest's "XPASS(strict)"), each as
        (entry, items that passed, items judged): all of them, and the entry should go;
        some, and it should be narrowed to the others (`baseline update` does either)."""
        passed: dict[str, int] = {}
        judged: dict[str, int] = {}
        for result in results:
            key = self.key_for(str(result["id"]), str(result["check"]))
            if key is None or not self.strict(key):
                continue
            if result["status"] in _PASSING:
                passed[key] = passed.get(key, 0) + 1
            if result["status"] in (*_PASSING, *FAILING):
                judged[key] = judged.get(key, 0) + 1
        return [(key, passed[key], judged[key]) for key in sorted(passed)]

    def left_out(self, results: Sequence[Mapping[str, Any]]) -> list[str]:
        """The entries (as written) that no item of `results` matched: `baseline update`
        from these results would drop them (a run narrowed by -k or -m left them out)."""
        used = {self.key_for(str(r["id"]), str(r["check"])) for r in results}
        return sorted(self._written(self.entries) - self._written(k for k in used if k))

    def update_command(self, report: Path) -> str:
        """The command that brings this baseline up to date with a run's JSON report, with
        paths as short as they can be from here."""
        return (
            f"mcp-testbench baseline update {shlex.quote(_shown(self.path))} "
            f"--from {shlex.quote(_shown(report))}"
        )


def _shown(path: Path) -> str:
    """`path` relative to the working directory when it lies under it, else as it is."""
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return str(path) if relative.startswith("..") else relative
