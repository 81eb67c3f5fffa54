"""The expected-failures baseline that turns the suite into a regression gate.

    {"format_version": 1,
     "expected_failures": {
       "http.delete-session": "we never send DELETE (issue 12)",
       "tools-call-2025-11-25-stdio::stdio.shutdown-closes-stdin": "kill on exit"}}

A key is a check id (every item of that check) or one item: `<scenario>-<revision>-
<transport>::<check>`, the item's pytest node id without its `mcp-testbench::` prefix.
Listed items are strict xfails: a listed failure is expected (FAIL, or BLOCKED: a blocked
item fails the run like a FAIL), a listed check that now passes fails the run (a stale
entry: delete it), and so does a new failure. N/A and SKIP stay what they are. An entry that
matches no collected item is reported, so typos do not hide.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Baseline", "BaselineError"]

_PREFIX = "mcp-testbench::"


class BaselineError(ValueError):
    pass


@dataclass(frozen=True)
class Baseline:
    path: Path
    entries: Mapping[str, str]

    @classmethod
    def load(cls, path: Path) -> Baseline:
        try:
            data: Any = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise BaselineError(f"--mcp-baseline {path}: no such file") from None
        except ValueError as exc:
            raise BaselineError(f"--mcp-baseline {path}: not valid JSON ({exc})") from None
        if not isinstance(data, dict) or data.get("format_version") != 1:
            raise BaselineError(
                f'--mcp-baseline {path}: expected {{"format_version": 1, "expected_failures": {{...}}}}'
            )
        entries = data.get("expected_failures")
        if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
            raise BaselineError(
                f'--mcp-baseline {path}: "expected_failures" must map check ids or item ids to reasons'
            )
        return cls(path, entries)

    def reason_for(self, nodeid: str, check_id: str) -> str | None:
        short = nodeid.removeprefix(_PREFIX)
        return self.entries.get(short, self.entries.get(check_id))

    def match(self, node_ids: Iterable[tuple[str, str]]) -> tuple[dict[str, str], list[str]]:
        """For (node id, check id) pairs: the reason of each listed item, by node id, and
        the entries that matched nothing. The plugin marks the listed items."""
        used: set[str] = set()
        reasons: dict[str, str] = {}
        for nodeid, check_id in node_ids:
            reason = self.reason_for(nodeid, check_id)
            if reason is None:
                continue
            short = nodeid.removeprefix(_PREFIX)
            used.add(short if short in self.entries else check_id)
            reasons[nodeid] = reason
        return reasons, sorted(set(self.entries) - used)
