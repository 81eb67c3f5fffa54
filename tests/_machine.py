"""Time bounds that scale with the machine.

A test that bounds how long something takes ("a broken driver is one clear error in
seconds") says something about the code only if a busy machine cannot break it: on two
cores with other work going on (a load of 15 to 31 was seen) every process runs several
times slower, and a fixed 30 s failed at 31.9. `within(seconds)` is the bound scaled by how
loaded the machine is now (the one-minute load average per core, never below 1), so the
test still fails on a hang (which no factor hides) but not on a busy hour. Figures that
must stay absolute are measured in benchmarks/, as ratios against a baseline, not here.
"""

from __future__ import annotations

from harness.running import load_factor

__all__ = ["load_factor", "within"]


def within(seconds: float) -> float:
    """`seconds`, scaled by the machine's load now."""
    return seconds * load_factor()
