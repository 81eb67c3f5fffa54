"""The machine: how loaded it is, for the bounds that wait on a process to start, and how
many processors it has, for how many client processes to keep working at once."""

from __future__ import annotations

import os

__all__ = ["load_factor", "usable_cores"]


def load_factor() -> float:
    """The one-minute load average per core, at least 1: how many times slower than an
    idle machine a process may start now. A bound on a start (a driver's hello, say) times
    this is still a bound, so a hang is still found, only not a busy hour."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # no load average on this platform
        return 1.0
    return max(1.0, load / usable_cores())


def usable_cores() -> int:
    """The processors this process may run on (its affinity, where the platform has one)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, cores or 1)
