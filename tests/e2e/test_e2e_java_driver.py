"""End to end: the whole conformance suite through the Java driver kit and its small client.

The kit (examples/drivers/java) is compiled with `javac --release 8`, then the suite runs
through `--mcp-driver "java -cp <build> smallclient.SmallClientDriver"` in a pytest
subprocess, the way tests/e2e/test_e2e_real_clients.py runs the other real clients, and every
verdict is compared with the pins below (same Pin rules; a stale pin fails too). Every
pinned verdict that is not a PASS is explained in docs/findings.md, section "The small Java
client"; update both together.

Without `javac` the test is skipped outside CI and fails under CI (tests/_java.py).
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path

import pytest
from _java import DRIVER_CLASS, build_kit, require_java
from _pins import SMALL_JAVA
from test_e2e_real_clients import _assert_pinned, _run_in

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e


def test_small_java_client(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    _, java = require_java()
    classes = build_kit(pytester.path / "java-build")
    driver = shlex.join([java, "-cp", str(classes), DRIVER_CLASS])
    # Mock transcripts under a short path of their own (a Unix socket path is short).
    scratch = Path(tempfile.mkdtemp(prefix="mcp-e2e-"))
    monkeypatch.setenv("TMPDIR", str(scratch))
    try:
        result, verdicts = _run_in(pytester, scratch, "small-java", f"--mcp-driver={driver}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    _assert_pinned(result, verdicts, SMALL_JAVA, "small-java-mcp-client")
