"""A variant driver (tools/variants.py): the Python example driver, with every notification
event written 300 ms after the client surfaced it, as a client that hands notifications
to its application from a thread of its own may. Legal: the driver protocol lets events
come at any time, and no check may judge a notification before its bounded wait is over.

    python tools/late_events_driver.py
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

LATE = 0.3  # seconds
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "drivers" / "python" / "driver.py"

spec = importlib.util.spec_from_file_location("example_driver", EXAMPLE)
assert spec is not None
assert spec.loader is not None
example = importlib.util.module_from_spec(spec)
sys.modules["example_driver"] = example
spec.loader.exec_module(example)

_write = example.Driver.write


def _write_late(self: Any, message: dict[str, Any]) -> None:
    if message.get("event") == "notification":
        asyncio.get_running_loop().call_later(LATE, _write, self, message)
    else:
        _write(self, message)


example.Driver.write = _write_late

if __name__ == "__main__":
    example.run()
