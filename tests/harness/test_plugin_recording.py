"""The `mcp_recording` mark and fixture, run through pytester with the mcp Python SDK's
client: a recorded session replays for the client over HTTP and over stdio, and the test
fails in its teardown when the client sent what the recording never saw or left a recorded
step unused, unless the mark relaxes that; a bad mark or script is one clear error.

The recordings are in recordings/ (made with `mcp-testbench record` from
recordings/calculator_server.py): tools/list, add(2, 3) and negate(7).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

RECORDINGS = Path(__file__).resolve().parent / "recordings"
ARGS = ("-p", "no:cacheprovider", "--strict-markers")

# The inner test module: `calls` is what the client asks, as (tool, arguments); an answer
# the recording does not have comes back as the SDK's MCPError, which the test keeps.
TEST_MODULE = """
import anyio
import pytest
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters

def target(recording):
    if recording.command:
        return StdioServerParameters(command=recording.command[0], args=recording.command[1:])
    return recording.url

async def use(recording, mode, calls):
    answers = []
    async with Client(target(recording), mode=mode) as client:
        tools = await client.list_tools()
        answers.append(sorted(t.name for t in tools.tools))
        for name, arguments in calls:
            try:
                result = await client.call_tool(name, arguments)
            except MCPError as exc:
                answers.append(f"error {exc.error.code}")
            else:
                answers.append(result.structured_content["result"])
    return answers

{tests}
"""

TEST = """
@pytest.mark.mcp_recording({mark})
def test_{name}(mcp_recording):
    answers = anyio.run(use, mcp_recording, {mode!r}, {calls!r})
    assert answers == {expected!r}
"""

ALL_CALLS = [("add", {"a": 2, "b": 3}), ("negate", {"n": 7})]


def _inner(pytester: pytest.Pytester, *tests: str) -> None:
    (pytester.path / "recordings").mkdir()
    for name in ("calculator.json", "calculator-2026.json"):
        shutil.copy(RECORDINGS / name, pytester.path / "recordings" / name)
    pytester.makepyfile(test_replay=TEST_MODULE.replace("{tests}", "\n".join(tests)))


def _test(name: str, mark: str, calls: object, expected: object, mode: str = "legacy") -> str:
    return TEST.format(name=name, mark=mark, mode=mode, calls=calls, expected=expected)


@pytest.mark.parametrize(
    ("mark", "mode"),
    [
        ('"recordings/calculator.json", transport="http"', "legacy"),
        ('"recordings/calculator.json", transport="stdio"', "legacy"),
        ('"recordings/calculator.json"', "legacy"),  # a stdio recording: stdio by default
        ('"recordings/calculator-2026.json", transport="http"', "auto"),
    ],
    ids=["http", "stdio", "default-transport", "http-2026-07-28"],
)
def test_a_recorded_session_replays_for_the_sdk_client(
    pytester: pytest.Pytester, mark: str, mode: str
) -> None:
    _inner(pytester, _test("replay", mark, ALL_CALLS, [["add", "negate"], 5, -7], mode))
    result = pytester.runpytest(*ARGS)
    result.assert_outcomes(passed=1)


def test_an_unused_step_fails_the_test_and_is_named(pytester: pytest.Pytester) -> None:
    _inner(
        pytester,
        *(
            _test(
                f"partial_{transport}",
                f'"recordings/calculator.json", transport="{transport}"',
                ALL_CALLS[:1],
                [["add", "negate"], 5],
            )
            for transport in ("http", "stdio")
        ),
    )
    result = pytester.runpytest(*ARGS)
    # The tests' own bodies passed; their teardowns are the errors.
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            line
            for transport in ("http", "stdio")
            for line in (
                f"*ERROR at teardown of test_partial_{transport}*",
                "mcp_recording: the replay of recordings/calculator.json "
                f"({transport}, 2025-11-25) did not go as recorded:",
                "1 recorded step was never used:",
                '  step 2 (expect tools/call): {"method": "tools/call", "params": '
                '{"arguments": {"n": 7}, "name": "negate"}}',
                "allow_unused=True lets steps go unused*; the transcript: *mcp-recording.jsonl",
            )
        ]
    )
    assert "never saw" not in result.stdout.str()


def test_an_unrecorded_request_fails_with_the_closest_step_and_the_difference(
    pytester: pytest.Pytester,
) -> None:
    calls = [("add", {"a": 2, "b": 4}), ("negate", {"n": 7})]
    # The client got the mock's error (-32602), as `serve` answers it; the test went on.
    _inner(
        pytester,
        *(
            _test(
                f"drifted_{transport}",
                f'"recordings/calculator.json", transport="{transport}"',
                calls,
                [["add", "negate"], "error -32602", -7],
            )
            for transport in ("http", "stdio")
        ),
    )
    result = pytester.runpytest(*ARGS)
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            line
            for transport in ("http", "stdio")
            for line in (
                f"*ERROR at teardown of test_drifted_{transport}*",
                "the client sent 1 message the recording never saw:",
                '  tools/call {"arguments": {"a": 2, "b": 4}, "name": "add"}',
                "    closest recorded step: step 1 (expect tools/call): "
                "/params/arguments/b: expected 3, got 4",
                "1 recorded step was never used:",
                "  step 1 (expect tools/call): *add*",
                "allow_unrecorded=True in the mark lets the client send them; allow_unused=True*",
            )
        ]
    )


def test_the_options_relax_each_finding_and_only_their_own(pytester: pytest.Pytester) -> None:
    wrong = [("add", {"a": 2, "b": 4})]
    both = [["add", "negate"], "error -32602"]
    _inner(
        pytester,
        _test(
            "unused_allowed",
            '"recordings/calculator.json", transport="http", allow_unused=True',
            ALL_CALLS[:1],
            [["add", "negate"], 5],
        ),
        _test(
            "both_allowed",
            '"recordings/calculator.json", allow_unused=True, allow_unrecorded=True',
            wrong,
            both,
        ),
        _test(
            "unrecorded_still_fails",
            '"recordings/calculator.json", transport="http", allow_unused=True',
            wrong,
            both,
        ),
        _test(
            "unused_still_fails",
            '"recordings/calculator.json", transport="http", allow_unrecorded=True',
            wrong,
            both,
        ),
    )
    result = pytester.runpytest(*ARGS, "-rE")
    result.assert_outcomes(passed=4, errors=2)
    out = result.stdout.str()
    assert "ERROR test_replay.py::test_unrecorded_still_fails - Failed: mcp_recording" in out
    assert "ERROR test_replay.py::test_unused_still_fails - Failed: mcp_recording" in out
    # Each teardown's own report, not the short summary (which under CI=true repeats
    # every message whole).
    report = out.split("ERROR at teardown of test_unrecorded_still_fails", 1)[1]
    report = report.split("short test summary info", 1)[0]
    first, second = report.split("ERROR at teardown of test_unused_still_fails", 1)
    assert "never saw" in first
    assert "never used" not in first
    assert "never used" in second
    assert "never saw" not in second


def test_a_failed_test_reports_what_was_unrecorded_but_not_the_steps_cut_short(
    pytester: pytest.Pytester,
) -> None:
    # The body fails on the client's error; the unused steps after it are no news.
    _inner(
        pytester,
        _test(
            "fails",
            '"recordings/calculator.json", transport="http"',
            [("add", {"a": 1, "b": 3})],
            [["add", "negate"], 4],
        ),
    )
    result = pytester.runpytest(*ARGS)
    result.assert_outcomes(failed=1, errors=1)
    out = result.stdout.str()
    assert (
        "closest recorded step: step 1 (expect tools/call): /params/arguments/a: expected 2, got 1"
        in out
    )
    assert "never used" not in out


def test_a_bad_mark_or_script_is_one_clear_error(pytester: pytest.Pytester) -> None:
    _inner(
        pytester,
        """
@pytest.mark.mcp_recording("recordings/missing.json")
def test_missing(mcp_recording):
    pass

@pytest.mark.mcp_recording("recordings/broken.json")
def test_broken():
    pass

@pytest.mark.mcp_recording("recordings")
def test_folder():
    pass

@pytest.mark.mcp_recording("recordings/calculator.json", allow_unsued=True)
def test_typo(mcp_recording):
    pass

@pytest.mark.mcp_recording("recordings/calculator.json", transport="sse")
def test_transport(mcp_recording):
    pass

@pytest.mark.mcp_recording("recordings/calculator.json", transport="sse-legacy")
def test_not_over_that_transport(mcp_recording):
    pass

@pytest.mark.mcp_recording()
def test_no_path(mcp_recording):
    pass

def test_no_mark(mcp_recording):
    pass
""",
    )
    (pytester.path / "recordings" / "broken.json").write_text(
        '{"format_version": 1, "name": "broken", "revisons": ["2025-11-25"], "steps": []}',
        encoding="utf-8",
    )
    result = pytester.runpytest(*ARGS, "-rE")
    result.assert_outcomes(errors=8)
    here = pytester.path / "recordings"
    expected = {
        "test_missing": f"mcp_recording: recordings/missing.json: no such script "
        f"({here / 'missing.json'}; a relative path is read from the test file's folder)",
        "test_broken": "'revisons'",
        "test_folder": f"mcp_recording: recordings: is a folder ({here}); name one script in it",
        "test_typo": "mcp_recording: unknown option allow_unsued; the options are transport, "
        "revision, allow_unused, allow_unrecorded",
        "test_transport": "mcp_recording: transport='sse': use one of 'stdio', 'http', "
        "'sse-legacy'",
        "test_not_over_that_transport": "the script runs over stdio, http, not sse-legacy",
        "test_no_path": "mcp_recording: give one script path",
        "test_no_mark": "mcp_recording: the fixture serves the script that the test's "
        '@pytest.mark.mcp_recording("path/to/script.json") names',
    }
    summary = [line for line in result.stdout.lines if line.startswith("ERROR test_replay.py::")]
    assert len(summary) == len(expected)
    for name in expected:
        (line,) = [s for s in summary if s.startswith(f"ERROR test_replay.py::{name} - ")]
        assert "Failed: mcp_recording: " in line
    out = result.stdout.str()
    for name, text in expected.items():
        # The section under the error's header, up to the next header: one line.
        section = re.search(rf"ERROR at setup of {name} _+\n(.*?)\n(?:_|=)", out, re.S)
        assert section is not None, name
        assert text in section.group(1), (name, section.group(1))
        assert "\n" not in section.group(1), section.group(1)


def test_the_mark_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("-p", "no:cacheprovider", "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.mcp_recording(script, transport=None, *"])


def test_the_readme_example_passes(pytester: pytest.Pytester) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("**In a pytest test.**", 1)[1]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert '@pytest.mark.mcp_recording("recordings/calculator.json", transport="http")' in example
    _inner(pytester)
    pytester.makepyfile(test_readme=example)
    result = pytester.runpytest(*ARGS, "test_readme.py")
    result.assert_outcomes(passed=1)
