"""The Python example driver with the official Python SDK's adapter as its client.

    python benchmarks/_sdk_driver.py

For benchmarks/vs_official.py and benchmarks/suite.py --sdk: the same SDK client through
driver protocol v1 that vs_official.py runs in process, so the two are comparable.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

if __name__ == "__main__":
    from harness.clients._sdk_mcp import McpSdkClient

    driver = runpy.run_path(str(ROOT / "examples" / "drivers" / "python" / "driver.py"))
    driver["Driver"].__init__.__globals__["ReferenceClient"] = McpSdkClient
    driver["run"]()
