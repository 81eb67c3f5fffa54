"""Tests for finding a bundled script by name (mock_servers._fixtures), and for `serve` and
`validate` given one, as after `pip install`: every test runs from an empty working
directory, where no `fixtures/` folder is at hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _machine import within
from _serving import serve

from harness.cli import main
from mock_servers import ScriptError, find_script, fixtures_root

WAIT = within(10.0)
NAME = "tools/list-and-call.json"


@pytest.fixture(autouse=True)
def empty_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.mark.parametrize(
    "given", [NAME, f"fixtures/{NAME}", "tools/list-and-call", "fixtures/tools/list-and-call"]
)
def test_a_name_that_is_not_a_file_here_is_the_bundled_script(given: str) -> None:
    assert not Path(given).exists()
    assert find_script(given) == fixtures_root() / NAME


def test_a_file_here_comes_before_the_bundled_one(empty_directory: Path) -> None:
    mine = empty_directory / NAME
    mine.parent.mkdir()
    mine.write_text("{}", encoding="utf-8")
    assert find_script(NAME) == Path(NAME)


def test_a_folder_is_found_only_where_folders_are_asked_for() -> None:
    assert find_script("tools", folders=True) == fixtures_root() / "tools"
    assert find_script("fixtures", folders=True) == fixtures_root()
    with pytest.raises(ScriptError, match="no such file, here or among the bundled scripts"):
        find_script("tools")


def test_an_unknown_name_lists_the_nearest_bundled_names() -> None:
    with pytest.raises(ScriptError) as info:
        find_script("tools/list-and-cal.json")
    error = info.value
    assert error.source == "tools/list-and-cal.json"
    assert error.reason == "no such file, here or among the bundled scripts"
    nearest = error.fix.split("the nearest: ", 1)[1].split(" (", 1)[0].split(", ")
    assert nearest[0] == NAME
    assert all((fixtures_root() / name).is_file() for name in nearest)
    assert str(fixtures_root()) in error.fix


def test_a_name_near_nothing_lists_the_bundled_folders() -> None:
    with pytest.raises(ScriptError) as info:
        find_script("zzzz.json")
    folders = sorted(p.name for p in fixtures_root().iterdir() if p.is_dir())
    assert f"(folders: {', '.join(folders)};" in info.value.fix


def test_an_absolute_path_is_never_taken_for_a_bundled_name(tmp_path: Path) -> None:
    missing = tmp_path / NAME
    with pytest.raises(ScriptError, match="no such file"):
        find_script(missing)


def test_validate_a_bundled_name_says_which_file_it_checked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["validate", NAME]) == 0
    out, err = capsys.readouterr()
    bundled = fixtures_root() / NAME
    assert f"mcp-testbench validate: {NAME} is not here: using the bundled script {bundled}" in err
    assert out.splitlines()[0].startswith(f"ok: {bundled} (")
    assert out.splitlines()[-1] == "1 scripts checked, 0 invalid"


def test_validate_fixtures_checks_every_bundled_script(capsys: pytest.CaptureFixture[str]) -> None:
    # The README's `mcp-testbench validate fixtures/`, outside a checkout.
    assert main(["validate", "fixtures/"]) == 0
    out, err = capsys.readouterr()
    assert f"using the bundled folder {fixtures_root()}" in err
    count = len(list(fixtures_root().rglob("*.json")))
    assert count > 50
    assert out.splitlines()[-1] == f"{count} scripts checked, 0 invalid"


def test_validate_an_unknown_name_is_one_invalid_line_with_the_nearest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["validate", "tools/list-and-cal.json", NAME]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("invalid: tools/list-and-cal.json: /: no such file or folder")
    assert f"the nearest: {NAME}" in out[0]
    assert out[-1] == "2 scripts checked, 1 invalid"


def test_serve_stdio_serves_a_bundled_script_by_name() -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "serve", NAME, "--stdio", "--quiet"],
        input=json.dumps(initialize) + "\n",
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 0, done.stderr
    [answer] = [json.loads(line) for line in done.stdout.splitlines()]
    assert answer["result"]["serverInfo"]["name"] == "tools-mock"
    bundled = fixtures_root() / NAME
    assert f"mcp-testbench serve: {NAME} is not here: using the bundled script {bundled}" in (
        done.stderr
    )


def test_serve_http_serves_the_readme_path_outside_a_checkout() -> None:
    with serve(f"fixtures/{NAME}", "--quiet") as (url, _, lines):
        assert url.startswith("http://127.0.0.1:")
        assert any(f"using the bundled script {fixtures_root() / NAME}" in line for line in lines)


def test_serve_an_unknown_name_is_refused_with_the_nearest(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "tools/list-and-cal.json", "--stdio"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mcp-testbench serve: tools/list-and-cal.json: /: no such file, ")
    assert f"the nearest: {NAME}" in err
