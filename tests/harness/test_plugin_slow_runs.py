"""Why a run was slow (issue 34, item 4): a client that leaves the server's requests
unanswered makes each such run wait out its bound, and a factory that does not declare
`concurrent_instances` runs one scenario run at a time; the summary says how long, why, and
the setting that helps, in lines of at most 100 columns.

Real pytest sessions (pytester) on the two runs of one scenario whose server requests a
deaf client never answers, with a short --mcp-timeout so that waiting out a bound is quick.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

# features-server-requests at one revision over two transports: two runs, each waiting out
# a bound for the ping the server sends during initialization.
TWO_RUNS = [
    "--mcp-revision=2025-11-25",
    "--mcp-transport=stdio,http",
    "-k",
    "features-server-requests",
    "--mcp-timeout=1",
    "-p",
    "no:cacheprovider",
]

DEAF = """
from harness.clients import ReferenceClient
from harness.protocol import Request


class Deaf(ReferenceClient):
    '''Never answers a request of the server (a ping, roots/list, sampling, ...).'''

    def _dispatch(self, message):
        if not isinstance(message, Request):
            super()._dispatch(message)


def make():  # a plain function: it says nothing of how many clients may work at once
    return Deaf()


class Declared(Deaf):  # its class says `concurrent_instances = True`, as ReferenceClient's does
    pass
"""

CONCURRENCY_LINE = (
    "mcp-testbench: one run at a time: deaf:make does not declare "
    "`concurrent_instances = True`; declare it (or pass --mcp-concurrency=2) if its clients "
    "can work side by side in one process"
)


def _summary_lines(result: pytest.RunResult) -> list[str]:
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "mcp-testbench summary" in line)
    end = next(i for i, line in enumerate(lines) if "short test summary info" in line)
    return lines[start + 1 : end]


def _said(result: pytest.RunResult, start: str) -> str:
    """The summary's line that begins with `start`, its wrapped lines joined (or '')."""
    lines = _summary_lines(result)
    for i, line in enumerate(lines):
        if line.startswith(start):
            rest = [line]
            for more in lines[i + 1 :]:
                if not more.startswith("  "):
                    break
                rest.append(more.strip())
            return " ".join(rest)
    return ""


def _deaf_run(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    pytester.makepyfile(deaf=DEAF)
    pytester.syspathinsert()
    return pytester.runpytest_subprocess(*TWO_RUNS, *extra, timeout=300)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_slow_run_says_how_long_why_and_the_setting_that_helps(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    result = _deaf_run(pytester, "--mcp-client=deaf:make", *workers)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
    slow = _said(result, "mcp-testbench: slow run: ")
    assert slow, result.stdout.str()
    # How long, why (what the client never did), and the bound that each wait lasted.
    assert " of waiting out bounds (--mcp-timeout 1 s) in 2 of 2 runs, of a " in slow
    assert slow.endswith("session: the client left the server's requests unanswered (ping)")
    waited = float(slow.split("slow run: ")[1].split(" s of waiting")[0])
    assert waited >= 2 * 0.9  # each run waited out its 1 s bound for the ping's answer
    # The factory never said its clients may work side by side: the line names it and what
    # to declare, once (also under xdist, where the workers' waits are added up).
    assert _said(result, "mcp-testbench: one run at a time: ") == CONCURRENCY_LINE
    assert result.stdout.str().count("mcp-testbench: slow run: ") == 1
    assert all(len(line) <= 100 for line in _summary_lines(result))


def test_a_factory_that_declares_concurrency_gets_no_such_line(
    pytester: pytest.Pytester,
) -> None:
    result = _deaf_run(pytester, "--mcp-client=deaf:Declared")
    assert "mcp-testbench: slow run: " in result.stdout.str()
    assert "one run at a time" not in result.stdout.str()
    assert "lets such runs overlap" not in result.stdout.str()  # runs at 2 already overlap


def test_an_explicit_concurrency_of_one_is_not_second_guessed(pytester: pytest.Pytester) -> None:
    """The user chose one at a time: no line about the factory, and the slow-run line says
    what a higher setting would do."""
    result = _deaf_run(pytester, "--mcp-client=deaf:make", "--mcp-concurrency=1")
    assert "one run at a time" not in result.stdout.str()
    assert _said(result, "mcp-testbench: slow run: ").endswith(
        "unanswered (ping); --mcp-concurrency above 1 lets such runs overlap"
    )


def test_a_client_that_answers_gets_no_slow_run_line(pytester: pytest.Pytester) -> None:
    """The same two runs with the reference client: nothing waited out, nothing said."""
    result = pytester.runpytest_subprocess(
        "--mcp-client=harness.clients:ReferenceClient", *TWO_RUNS, timeout=300
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert "slow run" not in result.stdout.str()
    assert "one run at a time" not in result.stdout.str()


def test_a_client_of_the_fixture_is_told_the_option_not_the_attribute(
    pytester: pytest.Pytester,
) -> None:
    """A conftest's mcp_client_factory fixture is read only as its runs start: declaring
    `concurrent_instances` there would change nothing, so the line names the option alone."""
    pytester.makepyfile(deaf=DEAF)
    pytester.makeconftest(
        "import pytest\nimport deaf\n\n"
        "@pytest.fixture(scope='session')\ndef mcp_client_factory():\n    return deaf.Declared\n"
    )
    pytester.syspathinsert()
    result = pytester.runpytest_subprocess("--mcp-suite", *TWO_RUNS, timeout=300)
    assert _said(result, "mcp-testbench: one run at a time") == (
        "mcp-testbench: one run at a time, as for any client of the mcp_client_factory "
        "fixture: pass --mcp-concurrency=2 if its clients can work side by side in one process"
    )
