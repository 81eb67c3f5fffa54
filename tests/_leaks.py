"""What a test process has left running: child processes and listening sockets (Linux)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["children", "listening_sockets", "processes_naming"]


def processes_naming(text: str) -> list[tuple[int, str]]:
    """Live processes whose command line holds `text` (a path only a test's run uses):
    what a run left behind, even once reparented away from the test process."""
    return [(pid, cmdline) for pid, cmdline in _processes(lambda _ppid: True) if text in cmdline]


def children(pid: int) -> list[tuple[int, str]]:
    return _processes(lambda ppid: ppid == pid)


def _processes(parent: Callable[[int], bool]) -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            # The command name is in parentheses and may hold spaces: split after it.
            fields = stat[stat.rindex(")") + 2 :].split()
            state, ppid = fields[0], int(fields[1])
            if parent(ppid) and state != "Z":
                cmdline = (
                    (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
                found.append((int(entry.name), cmdline.strip()))
        except (OSError, ValueError):
            continue  # the process ended while we looked
    return found


def listening_sockets(pid: int) -> list[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    listening = []
    for table in ("tcp", "tcp6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            parts = line.split()
            # state 0A is LISTEN; parts[9] is the socket's inode
            if len(parts) > 9 and parts[3] == "0A" and parts[9] in inodes:
                listening.append(f"{table} {parts[1]}")
    return listening
