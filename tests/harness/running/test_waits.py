"""Drives wait on the transcript, woken by the mock's pings, never on a timer.

The watch binds a Unix datagram socket and announces it in `<transcript>.notify`; a
transcript opened on that path pings it for every entry. A wait ends when what it waits
for is in the file, or at its bound, and says which.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from _machine import within

from harness.running._scenario import TranscriptWatch
from mock_servers.engine._transcript import NOTIFY_SUFFIX, Transcript


def _notes(entries: list[dict[str, object]]) -> set[object]:
    return {e.get("text") for e in entries if e.get("kind") == "note"}


def _write_later(path: Path, text: str, after: float) -> threading.Thread:
    """A transcript (as a mock server opens it) that records one note a little later."""

    def write() -> None:
        transcript = Transcript(script="s", revision="r", transport="stdio", path=path)
        time.sleep(after)  # the event the wait is for happens later, in another thread
        transcript.record("note", text=text)
        transcript.close()

    writer = threading.Thread(target=write)
    writer.start()
    return writer


@pytest.mark.parametrize("depth", [1, 12], ids=["short-path", "path-too-long-for-a-socket"])
def test_a_wait_wakes_on_the_entry_it_waits_for(tmp_path: Path, depth: int) -> None:
    folder = tmp_path.joinpath(*["a-rather-long-folder-name"] * depth)
    folder.mkdir(parents=True)
    path = folder / "transcript.jsonl"
    watch = TranscriptWatch(path)
    try:
        writer = _write_later(path, "here", after=0.2)
        started = time.monotonic()
        seen = anyio.run(watch.until, lambda entries: "here" in _notes(entries), 30.0)
        elapsed = time.monotonic() - started
        writer.join()
    finally:
        watch.close()
    assert seen
    assert elapsed < within(10)  # woken by the ping, far from the 30 s bound
    assert not Path(f"{path}{NOTIFY_SUFFIX}").exists()
    assert not Path(watch.address).exists()


def test_a_wait_for_what_never_comes_ends_at_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "transcript.jsonl"
    watch = TranscriptWatch(path)
    try:
        writer = _write_later(path, "something else", after=0.0)
        started = time.monotonic()
        seen = anyio.run(watch.until, lambda entries: "never" in _notes(entries), 0.5)
        elapsed = time.monotonic() - started
        writer.join()
    finally:
        watch.close()
    assert not seen
    assert 0.4 < elapsed < within(5)


def _scenarios() -> list[Any]:
    from harness.suite import SCENARIOS

    return list(SCENARIOS)


@pytest.mark.parametrize("scenario", _scenarios(), ids=lambda s: s.id)
def test_a_scenario_that_waits_on_the_client_up_to_the_time_out_says_so(scenario: Any) -> None:
    """`Scenario.waits_on_the_client` decides which runs a process starts first: a drive
    that waits, bounded by the run's time-out, for what the client does on its own (seen
    here with the reference client, which does it) must say so, and only such a drive.
    Each wait is also said as it starts and ends (the run window lets another run work
    meanwhile)."""
    from harness.clients import ReferenceClient
    from harness.running._scenario import execute

    revision, transport = list(scenario.matrix())[-1]
    said: list[bool] = []
    run = execute(
        scenario, revision, transport, ReferenceClient, op_timeout=_TIME_OUT, waiting=said.append
    )
    assert run.harness_error is None
    assert said == [True, False] * len(run.waits)  # the run window is told of every wait
    waited = [w["wait"] for w in run.waits if w["bound"] == _TIME_OUT]
    assert bool(waited) == scenario.waits_on_the_client, (
        f"{scenario.id} at {revision} over {transport} waited on the client for {waited}, "
        f"but says waits_on_the_client={scenario.waits_on_the_client}"
    )


_TIME_OUT = 7.0  # a figure no drive uses as a bound of its own
