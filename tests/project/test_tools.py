"""tools/variants.py and its clients (tools/variant_clients.py): the variants still work
with the reference client they reach into, and the comparison flags what it should.

The tool itself runs the whole suite once per variant (minutes): by hand, after a change to
a check or a script. Here each variant gets one scenario, over HTTP, the transport most of
them change something on.
"""

from __future__ import annotations

import functools

import pytest
import variant_clients  # tools/, on the path from conftest.py
import variants
from _mutation import verdicts

from harness.clients import ReferenceClient


def test_every_variant_is_a_reference_client_that_says_what_it_does() -> None:
    assert len(variant_clients.VARIANTS) >= 15
    for name in variant_clients.VARIANTS:
        cls = getattr(variant_clients, name)
        assert issubclass(cls, ReferenceClient), name
        assert (cls.__doc__ or "").strip(), f"{name} does not say what it does"
    assert set(variant_clients.ALLOWED) <= set(variant_clients.VARIANTS)


def test_a_difference_is_a_fault_unless_the_variant_allows_it() -> None:
    reference = {"a": ("PASS", "seen", None), "b": ("PASS", "seen", None), "c": ("N/A", "", None)}
    variant = {"a": ("PASS", "seen", None), "b": ("SKIP", "declared", None)}
    lines = variants.unexplained(reference, variant, frozenset())
    assert lines == [
        "b: PASS/seen (reference) -> SKIP/declared",
        "c: N/A/ (reference) -> absent",
    ]
    assert variants.unexplained(reference, variant, frozenset({"SKIP"})) == [lines[1]]
    assert variants.unexplained(reference, dict(reference), frozenset()) == []


@functools.cache
def _reference(run: tuple[str, str, str]) -> dict[str, str]:
    return verdicts(ReferenceClient, run)


@pytest.mark.parametrize("name", variant_clients.VARIANTS)
def test_each_variant_gets_the_reference_verdicts_on_a_call_over_http(name: str) -> None:
    run = ("tools-call", "2025-11-25", "http")
    seen = verdicts(getattr(variant_clients, name), run)
    assert seen, "no check was judged"
    allowed = variant_clients.ALLOWED.get(name, frozenset())
    reference = _reference(run)
    assert seen.keys() == reference.keys()
    assert {c: v for c, v in seen.items() if v != reference[c] and v not in allowed} == {}


@pytest.mark.parametrize(
    "run",
    [
        ("features-subscribe", "2025-11-25", "stdio"),
        ("http-listen-relisten", "2026-07-28", "http"),
    ],
    ids="-".join,
)
def test_the_late_events_driver_gets_the_reference_verdicts(run: tuple[str, str, str]) -> None:
    # Its notification events come 300 ms after the client surfaced them; these scenarios
    # judge what reached the application (a bounded, event-driven wait for each).
    seen = verdicts(variants.factory_of("LateEvents"), run)
    assert "PASS" in seen.values(), seen
    assert seen == _reference(run)


class _ReadsElsewhereOnUpdate(variant_clients.RefetchesOnChange):
    """Reads a resource the server never named when told of an update: no step answers it."""

    async def read_resource(self, uri: str) -> dict[str, object]:
        return await super().read_resource("file:///elsewhere.md")


def test_gaps_name_a_request_only_the_variant_left_unmatched(
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = ("features-subscribe", "2025-11-25", "stdio")
    assert (
        variants.find_gaps({"RefetchesOnChange": variant_clients.RefetchesOnChange}, 1, [run]) == 0
    )
    assert "no request left unmatched" in capsys.readouterr().out
    assert variants.find_gaps({"Elsewhere": _ReadsElsewhereOnUpdate}, 1, [run]) == 1
    out = capsys.readouterr().out
    assert "features-subscribe-2025-11-25-stdio: Elsewhere: unmatched resources/read" in out
    assert "1 left a request unmatched" in out


def test_stability_says_up_front_that_it_needs_pytest_xdist(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 33, item 9: without pytest-xdist every run failed with 'no usable report (pytest
    exit 4)' and only its log said why."""
    import importlib.util

    import stability

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "xdist" else real(name, *a)
    )
    assert stability.main(["--runs", "1", "--load", "0"]) == 2
    said = capsys.readouterr().err
    assert "pytest-xdist, which is not installed" in said
    assert "pip install pytest-xdist" in said
