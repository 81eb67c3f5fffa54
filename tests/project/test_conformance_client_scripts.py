"""tools/conformance_client_scripts.py writes fixtures/conformance-clients/: the shipped
scripts are what it writes, and nothing else is there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_shipped_scripts_are_what_the_tool_writes() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "conformance_client_scripts.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
