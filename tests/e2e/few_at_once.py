"""Run a command once one of N slots is free: `python few_at_once.py DIR N CMD ARGS...`.

The official runner's `client --requirements R` starts every scenario of a set at once:
some forty conformance clients on two cores, each importing its SDK, beside the rest of
the test run. Prefixed to the client's command, this keeps N of them running and the
others waiting for a slot (an exclusive lock on DIR/slot-K, held by the client itself
until it exits: the descriptor is inherited across exec). The client, its arguments, its
environment and its exit are its own; only when it starts changes. The wait is bounded
(WAIT_BOUND seconds, then exit 124), so nothing waits past the runner's own time-out.
"""

from __future__ import annotations

import fcntl
import os
import signal
import sys
from pathlib import Path

WAIT_BOUND = 600


def _slot(folder: Path, slots: int) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    descriptors = [os.open(folder / f"slot-{k}", os.O_CREAT | os.O_RDWR) for k in range(slots)]
    for fd in descriptors:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue
        return fd
    # Every slot taken: wait on one (the SIGALRM bounds it).
    fd = descriptors[os.getpid() % slots]
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def main(argv: list[str]) -> int:
    folder, slots, command = Path(argv[0]), int(argv[1]), argv[2:]
    signal.signal(signal.SIGALRM, lambda *_: os._exit(124))
    signal.alarm(WAIT_BOUND)
    fd = _slot(folder, slots)
    signal.alarm(0)
    os.set_inheritable(fd, True)
    os.execvp(command[0], command)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
