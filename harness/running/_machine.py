"""How loaded the machine is, for the bounds that wait on a process to start."""

from __future__ import annotations

import os

__all__ = ["load_factor"]


def load_factor() -> float:
    """The one-minute load average per core, at least 1: how many times slower than an
    idle machine a process may start now. A bound on a start (a driver's hello, say) times
    this is still a bound, so a hang is still found, only not a busy hour."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return 1.0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1.0, load / (cores or 1))
