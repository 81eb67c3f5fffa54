"""`python -m harness.cli ...`: the `mcp-testbench` command."""

from __future__ import annotations

import sys

from harness.cli import main

sys.exit(main())
