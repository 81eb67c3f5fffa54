"""`mcp-testbench fuzz`: progress, the summary, saved failures with their commands, the
same plans from the same seed, and `--replay`; over Streamable HTTP and at 2026-07-28;
a client in another language through `--driver` (the Python example driver)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.fuzzing import PROPERTIES, by_name

_VARIANT = "fuzz_variants:EmptyCursorEndsTheList"  # tools/, on the path from conftest.py
_EXAMPLE_DRIVER = (
    Path(__file__).resolve().parents[3] / "examples" / "drivers" / "python" / "driver.py"
)


def test_the_reference_client_passes_with_a_progress_line_and_a_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["fuzz", "--examples", "10", "--seed", "5"]) == 0
    out, err = capsys.readouterr()
    assert "harness.clients:ReferenceClient at 2025-11-25 over stdio, 10 examples, seed 5" in err
    assert "mcp-testbench fuzz: 10 examples," in err
    summary = out.strip().splitlines()[-1]
    tried = f"{len(PROPERTIES)} properties tried on 10 examples"
    assert summary.startswith(f"fuzz 2025-11-25 stdio seed 5: {tried}")
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
        assert f"FAIL: {by_name(['surfaced-as-sent'])[0]}" in out
        assert "(reproduced)" in out
        assert "replay: mcp-testbench fuzz --client" in out
        assert "1 failed, 1 failures saved" in out
        texts.append(json.loads(_saved(out).read_text())["steps"])
    assert texts[0] == texts[1]  # the description differs: it names its own path

    saved = _saved(out)
    assert main(["fuzz", "--client", _VARIANT, "--replay", str(saved)]) == 1
    assert "FAIL: surfaced-as-sent" in capsys.readouterr().out
    assert main(["fuzz", "--replay", str(saved)]) == 0
    assert f"0 of {len(PROPERTIES)} properties failed" in capsys.readouterr().out


def test_over_http_at_2026_07_28_a_failure_names_its_transport_and_replays_over_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = ["fuzz", "--client", _VARIANT, "--revision", "2026-07-28", "--transport", "http"]
    assert main([*argv, "--examples", "30", "--seed", "37", "--save-failures", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    saved = _saved(out)
    assert saved.name.endswith("-2026-07-28-http-seed37.json")
    assert "--revision 2026-07-28 --transport http --replay" in out
    assert f"serve:  mcp-testbench serve {saved} --http 127.0.0.1:0 --revision 2026-07-28" in out
    assert json.loads(saved.read_text())["transports"] == ["http"]
    # The script says where it is served: the replay runs it over HTTP again.
    assert main(["fuzz", "--client", _VARIANT, "--replay", str(saved)]) == 1
    assert "FAIL: surfaced-as-sent" in capsys.readouterr().out
    assert main(["fuzz", "--replay", str(saved)]) == 0


def test_a_driver_is_fuzzed_over_http(
    capsys: pytest.CaptureFixture[str],
) -> None:
    driver = f"{shlex.quote(sys.executable)} {shlex.quote(str(_EXAMPLE_DRIVER))}"
    argv = ["fuzz", "--driver", driver, "--transport", "http", "--examples", "12", "--seed", "4"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert f"{driver} at 2025-11-25 over http, 12 examples, seed 4" in err
    summary = out.strip().splitlines()[-1]
    assert summary.startswith("fuzz 2025-11-25 http seed 4: ")
    assert "tried on 12 examples" in summary
    assert "0 failed" in summary
    assert "0 harness faults" in summary


def test_a_driver_that_cannot_start_is_a_usage_error_at_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    silent = f"{shlex.quote(sys.executable)} -c 'import sys; sys.exit(3)'"
    assert main(["fuzz", "--driver", silent, "--examples", "50"]) == 2
    err = capsys.readouterr().err
    assert "the client cannot start" in err
    assert "50 examples," not in err.split("\n", 1)[1]  # no example ran past the first
    assert main(["fuzz", "--driver", "  "]) == 2
    assert "give the command that starts the driver" in capsys.readouterr().err


def test_a_client_that_cannot_be_imported_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["fuzz", "--client", "no_such_module_here:make"]) == 2
    assert "cannot import 'no_such_module_here'" in capsys.readouterr().err
