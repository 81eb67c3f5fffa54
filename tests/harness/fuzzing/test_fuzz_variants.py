"""Each variant in tools/fuzz_variants.py has a defect no scripted scenario provokes (the
suite judges it as the reference client at 2025-11-25 over stdio), and the fuzzer finds it,
shrinks it to a script of a few steps and saves it; the saved script replays the failure
with the variant and passes with the reference client.

Each search here runs few examples, from a seed whose second example already holds what
the variant gets wrong (`SEEDS`; Hypothesis draws other plans for another number of
examples): a search of 500 examples from seed 37 finds every variant too, within the
numbers docs/fuzzing.md gives, but takes minutes where this takes seconds."""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import fuzz_variants  # tools/, on the path from conftest.py
import pytest
from _machine import within
from _mutation import verdicts

from harness.clients import ReferenceClient
from harness.fuzzing import DEFAULT_OP_TIMEOUT, by_name, replay
from harness.suite import SCENARIOS
from mock_servers import load_script

TOOLS = Path(fuzz_variants.__file__).resolve().parent
SEEDS = {
    "BigIntegersAsFloats": 8,
    "EmptyCursorEndsTheList": 8,
    "ImageToolErrorsAsSuccess": 30,
    "WholeFloatsAsIntegersInToolMeta": 8,
    "IdReusedAfterAnApplicationError": 30,
    "Int64ServerRequestIds": 48,
    "BlobContentsSniffedAsText": 5,
    "PromptListingsSkipEmptyPages": 24,
    "JsonLookingGarbageEndsTheSession": 15,
}
"""Variant -> a seed at which `--examples 8` finds it (see the module's docstring)."""
_EXAMPLES = 8
_RUNS = [
    (s.id, "2025-11-25", "stdio") for s in SCENARIOS if ("2025-11-25", "stdio") in set(s.matrix())
]


@functools.cache
def _reference(run: tuple[str, str, str]) -> dict[str, str]:
    return verdicts(ReferenceClient, run)


@pytest.mark.parametrize("variant", fuzz_variants.VARIANTS, ids=lambda v: v.__name__)
def test_no_scripted_scenario_tells_the_variant_from_the_reference(variant: type) -> None:
    assert len(_RUNS) > 20
    differ = {run[0]: (verdicts(variant, run), _reference(run)) for run in _RUNS}
    assert {k: v for k, v in differ.items() if v[0] != v[1]} == {}


@pytest.mark.parametrize("variant", fuzz_variants.VARIANTS, ids=lambda v: v.__name__)
def test_the_fuzzer_finds_shrinks_and_saves_the_variants_defect(
    variant: type, tmp_path: Path
) -> None:
    """The search runs as a user runs it, `mcp-testbench fuzz` in a process of its own:
    in a pytest-xdist worker that had run much of the suite before, the same seed found
    nothing for two variants, while a fresh process finds each at once (what differs there
    is not pinned down yet)."""
    name = variant.__name__
    expected = fuzz_variants.EXPECTED[name]
    spec = f"fuzz_variants:{name}"
    bound = within(DEFAULT_OP_TIMEOUT)  # grows with the machine's load: slow is not a hang
    argv = ["fuzz", "--client", spec, "--examples", str(_EXAMPLES), "--seed", str(SEEDS[name])]
    argv += ["--save-failures", str(tmp_path), "--timeout", f"{bound:.1f}"]
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *argv],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(TOOLS), *sys.path])},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=within(600),
        check=False,
    )
    shown = done.stdout[-3000:] + done.stderr[-2000:]
    level = by_name([expected])[0].level
    if level == "FAIL":
        assert done.returncode == 1, shown
        assert "1 failed, 1 failures saved, 0 harness faults;" in done.stdout, shown
    else:  # reported and saved, never failed
        assert done.returncode == 0, shown
        assert "0 failed, 1 warned, 1 failures saved, 0 harness faults;" in done.stdout, shown
    pattern = rf"^{level}: (\S+) .*\((\d+) steps after shrinking\)$"
    (failed,) = re.findall(pattern, done.stdout, re.M)
    assert failed[0] == expected, shown
    assert int(failed[1]) <= 5, shown
    (saved,) = re.findall(r"^  saved: (.+) \(reproduced\)$", done.stdout, re.M)
    script_path = Path(saved)
    # An ordinary script: `validate` and `serve` take it as it is.
    script = load_script(script_path)
    assert len(script.steps) == int(failed[1])
    replay_command = f"--client {spec} --revision 2025-11-25 --transport stdio --replay {saved}"
    assert replay_command in json.loads(script_path.read_text())["description"]
    # The saved script replays the failure, and it is the variant's: the reference passes.
    assert replay(script_path, variant, by_name([expected]), op_timeout=bound)[expected]
    assert not any(replay(script_path, ReferenceClient, op_timeout=bound).values())
