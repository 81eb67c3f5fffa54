"""The reference client keeps every property at each revision over each transport, with no
harness fault (every generated message passed the mock's send gate at run time too). The
command line does the same with 500 examples each (docs/fuzzing.md quotes the runs)."""

from __future__ import annotations

import pytest
from _machine import within

from harness.clients import ReferenceClient
from harness.fuzzing import DEFAULT_OP_TIMEOUT, FUZZ_REVISIONS, FUZZ_TRANSPORTS, PROPERTIES, fuzz


@pytest.mark.parametrize("transport", FUZZ_TRANSPORTS)
@pytest.mark.parametrize("revision", FUZZ_REVISIONS)
def test_the_reference_client_keeps_every_property_on_60_examples(
    revision: str, transport: str
) -> None:
    # The client's bound grows with the machine's load: a slow start is not a hang.
    report = fuzz(
        ReferenceClient,
        revision=revision,
        transport=transport,
        examples=60,
        seed_value=2026,
        op_timeout=within(DEFAULT_OP_TIMEOUT),
    )
    assert report.harness_faults == []
    assert [(f.violated.name, f.details) for f in report.failures] == []
    assert report.examples == 60  # every property was checked on each of them
    assert report.properties == PROPERTIES
    assert report.examples_per_second > 0
    assert report.summary().startswith(f"fuzz {revision} {transport} seed 2026: ")
    assert f"{len(PROPERTIES)} properties tried on 60 examples" in report.summary()
