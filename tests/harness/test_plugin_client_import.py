"""`--mcp-client=MODULE:ATTR` imports as `python -m` (and `mcp-testbench run`) does: the
working directory first. Each way an import fails is one usage error naming the option,
the module, what failed and the fix (harness/pytest_plugin.py, `load_factory`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _machine import within

pytest_plugins = ["pytester"]

WAIT = within(10.0)
ONE_ITEM = "mcp-testbench::tools-call-2025-11-25-stdio::tools.call-result"
FACTORY = "from harness.clients import ReferenceClient as make_client\n"


def _console_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`pytest ARGS` as a user types it in `folder`: the console script, whose sys.path
    starts at its own folder (not the working directory), and no PYTHONPATH."""
    console = Path(sys.executable).with_name("pytest")
    if console.is_file():
        command = [str(console)]
    else:  # a launcher outside `folder` puts its own folder first, as the console script does
        launcher = folder.parent / "launch_pytest.py"
        launcher.write_text("import sys, pytest\nsys.exit(pytest.console_main())\n")
        command = [sys.executable, str(launcher)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [*command, "-p", "no:cacheprovider", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT * 6,
    )


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["in-process", "xdist"])
def test_a_client_module_in_the_working_directory_is_imported(
    tmp_path: Path, workers: list[str]
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "local_client.py").write_text(FACTORY, encoding="utf-8")
    done = _console_pytest(folder, "--mcp-client=local_client:make_client", *workers, ONE_ITEM)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def _usage_error(pytester: pytest.Pytester, spec: str) -> str:
    result = pytester.runpytest(f"--mcp-client={spec}", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [line for line in result.stderr.lines if line.startswith("ERROR: ")]
    return line


def test_no_such_module_says_where_it_looked_and_the_fix(pytester: pytest.Pytester) -> None:
    line = _usage_error(pytester, "absent_client:make")
    assert line == (
        "ERROR: --mcp-client 'absent_client:make': cannot import 'absent_client': "
        "ModuleNotFoundError: no module 'absent_client' in the working directory "
        f"({pytester.path}) nor among the packages of {sys.executable}; fix: run from the "
        "folder that holds absent_client/ or absent_client.py, or install the package "
        "that provides it into this environment"
    )


def test_a_missing_module_in_a_package_names_the_package(pytester: pytest.Pytester) -> None:
    pytester.mkpydir("client_pkg")
    line = _usage_error(pytester, "client_pkg.testing:make")
    assert line == (
        "ERROR: --mcp-client 'client_pkg.testing:make': cannot import 'client_pkg.testing': "
        f"ModuleNotFoundError: the package 'client_pkg' ({pytester.path / 'client_pkg'}) has "
        "no module 'testing'; fix: check the module's name"
    )


def test_a_dependency_the_module_imports_is_named_as_not_installed(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(needs_dep="import json\nimport not_installed_anywhere\n")
    line = _usage_error(pytester, "needs_dep:make")
    assert line == (
        "ERROR: --mcp-client 'needs_dep:make': importing 'needs_dep' failed: it imports "
        "'not_installed_anywhere', which is not installed (ModuleNotFoundError at "
        f"{pytester.path / 'needs_dep.py'}:2); fix: install 'not_installed_anywhere' into "
        f"this environment ({sys.executable})"
    )


def test_an_exception_inside_the_module_is_named_with_its_line(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(raising_client="TOKEN = None\nraise RuntimeError('no MCP_TOKEN set')\n")
    line = _usage_error(pytester, "raising_client:make")
    assert line == (
        "ERROR: --mcp-client 'raising_client:make': importing 'raising_client' raised "
        f"RuntimeError at {pytester.path / 'raising_client.py'}:2: no MCP_TOKEN set; fix: "
        "correct the module (python -c 'import raising_client' shows the whole traceback)"
    )


def test_a_syntax_error_is_named_with_its_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(broken_client="x = 1\ndef make(:\n    pass\n")
    line = _usage_error(pytester, "broken_client:make")
    assert line.startswith(
        "ERROR: --mcp-client 'broken_client:make': importing 'broken_client' raised "
        f"SyntaxError at {pytester.path / 'broken_client.py'}:2: "
    )
    assert line.endswith(
        "fix: correct the module (python -c 'import broken_client' shows the whole traceback)"
    )


def test_a_missing_attribute_lists_the_names_and_the_nearest(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(named_client=FACTORY + "def helper():\n    pass\n")
    line = _usage_error(pytester, "named_client:make_clinet")
    assert line == (
        "ERROR: --mcp-client 'named_client:make_clinet': 'named_client' has no attribute "
        f"'make_clinet' (AttributeError; 'named_client' is {pytester.path / 'named_client.py'}, "
        "its callables: helper, make_client); fix: name a factory it defines, "
        "e.g. named_client:make_client"
    )
