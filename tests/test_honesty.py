"""Honesty: clients that raise, hang, block, do nothing, or never start get FAIL, never PASS.

"A check with no evidence is never a pass", in bounded time. Each case runs the real
plugin (pytester) on one scenario with a short time-out, and reads the JSON report.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

BAD_CLIENTS = '''
import time
import anyio

class _Base:
    name = "bad"
    version = "0"
    supports = frozenset()

class Raising(_Base):
    def __getattr__(self, name):
        async def fail(*args, **kwargs):
            raise RuntimeError(f"{name} always raises")
        return fail
    async def close(self):
        raise RuntimeError("close raises too")

class Hanging(_Base):
    def __getattr__(self, name):
        async def hang(*args, **kwargs):
            await anyio.sleep_forever()
        return hang

class Idle(_Base):
    """Connects to nothing and answers everything with plausible empty values."""
    async def connect(self, target, options):
        return {"protocolVersion": options.protocol_version, "serverInfo": {"name": "x", "version": "1"}}
    async def list_tools(self):
        return {"tools": []}
    async def call_tool(self, name, arguments=None, **kwargs):
        return {"content": [{"type": "text", "text": "3"}], "isError": False}
    async def close(self):
        pass

class Blocking(_Base):
    """Blocks its event loop in synchronous code: even cancellation cannot reach it."""
    async def connect(self, target, options):
        time.sleep(60)
    async def close(self):
        pass

def broken_factory():
    raise ImportError("the client's dependencies are missing")
'''

FAST = [
    "--mcp-revision=2025-11-25",
    "--mcp-transport=stdio",
    "-k",
    "tools-call",
    "--mcp-timeout=0.3",
    "-p",
    "no:cacheprovider",
]


def _run(
    pytester: pytest.Pytester, client: str, *extra: str
) -> tuple[pytest.RunResult, list[dict[str, object]], float]:
    pytester.makepyfile(bad_clients=BAD_CLIENTS)
    pytester.syspathinsert()
    report = pytester.path / "report.json"
    start = time.monotonic()
    result = pytester.runpytest_subprocess(
        f"--mcp-client=bad_clients:{client}", *FAST, *extra, f"--mcp-report={report}", timeout=120
    )
    elapsed = time.monotonic() - start
    results = (
        json.loads(Path(report).read_text(encoding="utf-8"))["results"] if report.exists() else []
    )
    return result, results, elapsed


@pytest.mark.parametrize("client", ["Raising", "Hanging", "Idle", "broken_factory"])
def test_bad_client_fails_every_check(pytester: pytest.Pytester, client: str) -> None:
    result, results, elapsed = _run(pytester, client)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert results, "no verdicts were reported"
    assert {r["status"] for r in results} == {"FAIL"}, [(r["check"], r["status"]) for r in results]
    assert elapsed < 60


def test_blocking_client_fails_in_bounded_time(pytester: pytest.Pytester) -> None:
    result, results, elapsed = _run(pytester, "Blocking", "--mcp-timeout=0.2")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert {r["status"] for r in results} == {"FAIL"}
    assert any(
        "did not finish" in str(r["reason"]) or "in time" in str(r["reason"]) for r in results
    )
    assert elapsed < 55


def test_driver_that_exits_at_once_fails(pytester: pytest.Pytester) -> None:
    driver = pytester.path / "driver.py"
    driver.write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    report = pytester.path / "report.json"
    result = pytester.runpytest_subprocess(
        f"--mcp-driver={sys.executable} {driver}", *FAST, f"--mcp-report={report}", timeout=120
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    results = json.loads(report.read_text(encoding="utf-8"))["results"]
    assert {r["status"] for r in results} == {"FAIL"}
    assert "exited" in result.stdout.str()
