"""The official runner's expected-failures check, applied to a conformance client's runs.

With `--expected-failures FILE` the runner (0.2.0-alpha.12, `dist/index.js`) compares each
client scenario's checks with the file's `client:` entries, and exits 1 on an unexpected
failure or a stale entry. Its rule, reproduced here on the verdicts this harness gives its
check ids:

- a check counts as failing when it is a FAILURE or a WARNING (a WARNING too, though the
  scenario's own pass rule ignores it); per check id only its worst status counts (INFO
  never does);
- `<scenario>` expects the whole scenario to fail: any failing check is expected, none is
  a stale entry;
- `<scenario>:<check-id>` expects that check to fail: it is stale when the check is a
  SUCCESS, and says nothing when the check was not emitted; the scenario's other failing
  checks are unexpected;
- a scenario with no entry: each failing check is unexpected, counted as the scenario;
- both forms for one scenario is an error of the file ("redundant"), as is any entry
  that is not `<scenario>` or `<scenario>:<check-id>`.

Entries for scenarios not run say nothing. A scenario this harness saw hang (the runner
would still be waiting) is never an expected failure: it fails the run as a hang.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.official._expected_failures import OfficialBaselineError, parse_official

__all__ = ["BaselineOutcome", "ClientBaseline", "check_client_baseline", "load_client_baseline"]

FAILING = ("FAILURE", "WARNING")
_RANK = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1}


@dataclass(frozen=True)
class ClientBaseline:
    """The `client:` entries of an expected-failures file."""

    source: str
    whole: frozenset[str]
    """Scenarios expected to fail as a whole."""
    checks: Mapping[str, tuple[str, ...]]
    """Per scenario, the check ids expected to fail, in the file's order."""

    def entry_for(self, scenario: str, check_id: str | None = None) -> str | None:
        """The entry that expects this check (or, without one, the scenario) to fail."""
        if scenario in self.whole:
            return scenario
        if check_id is not None and check_id in self.checks.get(scenario, ()):
            return f"{scenario}:{check_id}"
        return None


def load_client_baseline(path: Path) -> ClientBaseline:
    """The file's `client:` entries, refused as the runner refuses them."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise OfficialBaselineError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise OfficialBaselineError(f"{path}: cannot be read ({exc})") from None
    entries = parse_official(text, str(path)).get("client", [])
    whole = frozenset(e for e in entries if ":" not in e)
    checks: dict[str, dict[str, None]] = {}
    for entry in entries:
        scenario, sep, check_id = entry.partition(":")
        if not sep:
            continue
        if scenario in whole:
            raise OfficialBaselineError(
                f"{path}: '{scenario}' expects the whole scenario to fail, so '{entry}' is "
                "redundant; remove one or the other"
            )
        checks.setdefault(scenario, {})[check_id] = None
    return ClientBaseline(
        str(path), whole, {scenario: tuple(ids) for scenario, ids in checks.items()}
    )


@dataclass(frozen=True)
class BaselineOutcome:
    """The runner's three lists, as `<scenario>` or `<scenario>:<check-id>` (with the
    revision in brackets when a run covers more than one)."""

    expected: tuple[str, ...]
    stale: tuple[str, ...]
    unexpected: tuple[str, ...]

    @property
    def passes(self) -> bool:
        """The runner's exit code 0."""
        return not self.stale and not self.unexpected

    def lines(self) -> list[str]:
        """The runner's baseline summary, in its order and words."""
        out: list[str] = []
        for title, mark, names in (
            ("Expected failures (in baseline):", "~", self.expected),
            ("Stale baseline entries (now passing - remove from baseline):", "✓", self.stale),
            ("Unexpected failures (not in baseline):", "✗", self.unexpected),
        ):
            if names:
                out += [title, *(f"  {mark} {name}" for name in names)]
        if self.passes:
            out.append("Baseline check passed: all failures are expected.")
        else:
            if self.stale:
                out.append(
                    "Baseline is stale: update your expected-failures file to remove passing "
                    "entries."
                )
            if self.unexpected:
                out.append(
                    "Unexpected failures detected: these are not in your expected-failures "
                    "baseline."
                )
        return out


def _worst_per_id(checks: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Per check id its worst status, INFO left out (the runner's dedupe: a later check
    of an equal rank wins, which changes nothing for the status)."""
    worst: dict[str, str] = {}
    for check_id, status in checks:
        if status == "INFO":
            continue
        if check_id not in worst or _RANK.get(status, 0) >= _RANK.get(worst[check_id], 0):
            worst[check_id] = status
    return worst


def check_client_baseline(
    baseline: ClientBaseline,
    scenarios: Sequence[tuple[str, str, Sequence[tuple[str, str]]]],
    *,
    hung: frozenset[tuple[str, str]] = frozenset(),
) -> BaselineOutcome:
    """The runner's rule over `(scenario, revision, [(check id, status), ...])` for each
    scenario run; `hung` (scenario, revision) pairs are unexpected whatever is listed."""
    revisions = {revision for _, revision, _ in scenarios}
    expected: list[str] = []
    stale: list[str] = []
    unexpected: list[str] = []

    def named(text: str, revision: str) -> str:
        return f"{text} [{revision}]" if len(revisions) > 1 else text

    for scenario, revision, checks in scenarios:
        worst = _worst_per_id(checks)
        failing = [check_id for check_id, status in worst.items() if status in FAILING]
        if (scenario, revision) in hung:
            unexpected.append(named(f"{scenario} (hung)", revision))
            continue
        if scenario in baseline.whole:
            (expected if failing else stale).append(named(scenario, revision))
            continue
        listed = baseline.checks.get(scenario)
        if listed is None:
            if failing:
                unexpected.append(named(scenario, revision))
            continue
        for check_id in failing:
            text = named(f"{scenario}:{check_id}", revision)
            (expected if check_id in listed else unexpected).append(text)
        stale += [
            named(f"{scenario}:{check_id}", revision)
            for check_id in listed
            if worst.get(check_id) == "SUCCESS"
        ]
    return BaselineOutcome(tuple(expected), tuple(stale), tuple(unexpected))
