"""`mcp-testbench fuzz`: progress, the summary, saved failures with their commands, the
same plans from the same seed, and `--replay`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main

_VARIANT = "fuzz_variants:EmptyCursorEndsTheList"  # tools/, on the path from conftest.py


def test_the_reference_client_passes_with_a_progress_line_and_a_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["fuzz", "--examples", "10", "--seed", "5"]) == 0
    out, err = capsys.readouterr()
    assert "harness.clients:ReferenceClient at 2025-11-25 over stdio, 10 examples, seed 5" in err
    assert "mcp-testbench fuzz: 10 examples," in err
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("fuzz 2025-11-25 stdio seed 5: 5 properties tried on 10 examples")
    assert "0 failed, 0 failures saved" in summary
    assert summary.endswith("examples/s")


def _saved(out: str) -> Path:
    line = next(x for x in out.splitlines() if x.strip().startswith("saved: "))
    return Path(line.split("saved: ", 1)[1].split(" (", 1)[0])


def test_a_failure_is_saved_the_same_from_the_same_seed_and_replays(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    texts: list[object] = []
    for folder in ("one", "two"):
        argv = ["fuzz", "--client", _VARIANT, "--examples", "30", "--seed", "37"]
        assert main([*argv, "--save-failures", str(tmp_path / folder)]) == 1
        out = capsys.readouterr().out
        assert "FAIL: surfaced-as-sent (TL-1, TL-2)" in out
        assert "(reproduced)" in out
        assert "replay: mcp-testbench fuzz --client" in out
        assert "1 failed, 1 failures saved" in out
        texts.append(json.loads(_saved(out).read_text())["steps"])
    assert texts[0] == texts[1]  # the description differs: it names its own path

    saved = _saved(out)
    assert main(["fuzz", "--client", _VARIANT, "--replay", str(saved)]) == 1
    assert "FAIL: surfaced-as-sent" in capsys.readouterr().out
    assert main(["fuzz", "--replay", str(saved)]) == 0
    assert "0 of 5 properties failed" in capsys.readouterr().out


def test_a_client_that_cannot_be_imported_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["fuzz", "--client", "no_such_module_here:make"]) == 2
    assert "cannot import 'no_such_module_here'" in capsys.readouterr().err
