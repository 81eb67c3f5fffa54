"""The reference client keeps every property at 2025-11-25 over stdio, with no harness
fault (every generated message passed the mock's send gate at run time too)."""

from __future__ import annotations

from _machine import within

from harness.clients import ReferenceClient
from harness.fuzzing import DEFAULT_OP_TIMEOUT, PROPERTIES, fuzz


def test_the_reference_client_keeps_every_property_on_50_examples() -> None:
    # The client's bound grows with the machine's load: a slow start is not a hang.
    report = fuzz(
        ReferenceClient,
        revision="2025-11-25",
        examples=50,
        seed_value=2026,
        op_timeout=within(DEFAULT_OP_TIMEOUT),
    )
    assert report.harness_faults == []
    assert [(f.violated.name, f.details) for f in report.failures] == []
    assert report.examples == 50  # every property was checked on each of them
    assert report.properties == PROPERTIES
    assert report.examples_per_second > 0
    assert "5 properties tried on 50 examples" in report.summary()
