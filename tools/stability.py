"""Are the verdicts stable? The whole suite, N times in a row, on a machine kept busy.

    python tools/stability.py                      # 20 runs of the reference client
    python tools/stability.py --runs 2 --load 0    # a quick look, no background load

Each run is `pytest --mcp-client=<client> -n 2 --dist loadscope --mcp-report=run-K.json`
(in a scratch directory with an empty pytest configuration, so only the conformance suite
is collected), with `--load` busy-loop processes (default 2: every core of a two-core
machine) competing for the CPU the whole time: timing-dependent verdicts show up as
differences. The verdicts (item id -> status, kind, root cause) of every run are compared
with the first run's; exit status 1 if any item differs, with the items and what they were
in each run. The busy processes are stopped by pid at the end, also on Ctrl-C.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_CLIENT = "harness.clients:ReferenceClient"

# Deaf to Ctrl-C (which reaches the whole process group): stopped by pid, and quietly.
_BUSY = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass"

Verdicts = dict[str, tuple[str, str, str | None]]
"""Item id -> (status, kind, root)."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Run the whole suite N times under CPU load; exit 1 if any verdict differs."
    )
    parser.add_argument("--runs", type=int, default=20, help="how many runs (default 20)")
    parser.add_argument(
        "--load",
        type=int,
        default=2,
        metavar="N",
        help="busy-loop processes kept running meanwhile (default 2; 0 for none)",
    )
    parser.add_argument(
        "--client", default=REFERENCE_CLIENT, metavar="MODULE:ATTR", help="the client to run"
    )
    parser.add_argument(
        "--workers", default="2", metavar="N", help="pytest-xdist workers per run (default 2)"
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="keep the reports and logs here (default: a scratch folder, kept only on a difference)",
    )
    parser.add_argument(
        "--run-timeout",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="give up on a run after this long (default 3600)",
    )
    parser.add_argument("pytest_args", nargs="*", help="after --: more arguments for pytest")
    return parser


@contextlib.contextmanager
def background_load(processes: int) -> Iterator[list[int]]:
    """Busy-loop processes for the duration; stopped by pid whatever happens."""
    busy: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(processes):
            busy.append(subprocess.Popen([sys.executable, "-c", _BUSY]))
        yield [p.pid for p in busy]
    finally:
        for process in busy:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_suite(
    index: int, folder: Path, client: str, workers: str, extra: Sequence[str], bound: float
) -> tuple[int, Path]:
    """One run of the whole suite; its exit code and its JSON report. `client` is a
    factory (`module:attr`), or `driver:` and a driver command."""
    report = folder / f"run-{index}.json"
    log = folder / f"run-{index}.log"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-c",
        str(folder / "pytest.ini"),
        "--rootdir",
        str(folder),
        "-p",
        "no:cacheprovider",
        (
            f"--mcp-driver={client.removeprefix('driver:')}"
            if client.startswith("driver:")
            else f"--mcp-client={client}"
        ),
        "-n",
        workers,
        "--dist",
        "loadscope",
        f"--mcp-report={report}",
        "-q",
        "--tb=no",
        *extra,
        str(folder),  # the only path: nothing but the suite the plugin adds is collected
    ]
    env = dict(os.environ)
    # This checkout's harness, whatever is installed.
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            code = process.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            code = -1
        finally:
            _stop(process)  # on a time-out or Ctrl-C too: nothing of a run outlives it
    return code, report


def verdicts(report: Path) -> Verdicts:
    results = json.loads(report.read_text(encoding="utf-8"))["results"]
    return {str(r["id"]): (str(r["status"]), str(r["kind"]), r.get("root")) for r in results}


def show(verdict: tuple[str, str, str | None] | None) -> str:
    if verdict is None:
        return "absent"
    status, kind, root = verdict
    return f"{status}/{kind}" + (f" ({root})" if root else "")


def differences(first: Verdicts, other: Verdicts) -> list[str]:
    """The items whose verdict differs from the first run's, with both verdicts."""
    return [
        f"{item}: {show(first.get(item))} -> {show(other.get(item))}"
        for item in sorted(set(first) | set(other))
        if first.get(item) != other.get(item)
    ]


def _interrupt_on_term(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.runs < 1 or args.load < 0:
        print("--runs must be at least 1 and --load at least 0", file=sys.stderr)
        return 2
    # Every run goes through pytest-xdist (-n, --dist loadscope): without it each run would
    # end with pytest's usage error, "no usable report (pytest exit 4)", and only its log
    # would say why.
    if importlib.util.find_spec("xdist") is None:
        print(
            "tools/stability.py runs the suite under pytest-xdist, which is not installed "
            f"for {sys.executable}: pip install pytest-xdist (or mcp-testbench[test])",
            file=sys.stderr,
        )
        return 2
    signal.signal(signal.SIGTERM, _interrupt_on_term)  # `kill` stops the load as Ctrl-C does
    folder = args.keep or Path(tempfile.mkdtemp(prefix="mcp-testbench-stability-"))
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    runs: list[Verdicts] = []
    unstable: dict[str, list[str]] = {}
    broken = 0
    started = time.monotonic()
    try:
        with background_load(args.load) as pids:
            if pids:
                print(f"background load: {len(pids)} busy processes (pids {pids})", flush=True)
            for index in range(1, args.runs + 1):
                print(f"run {index}/{args.runs}: running...", flush=True)
                run_start = time.monotonic()
                code, report = run_suite(
                    index, folder, args.client, args.workers, args.pytest_args, args.run_timeout
                )
                took = f"{time.monotonic() - run_start:.0f} s"
                if not report.exists() or code not in (0, 1):
                    broken += 1
                    print(
                        f"run {index}/{args.runs}: no usable report (pytest exit {code}, {took}); "
                        f"see {folder / f'run-{index}.log'}",
                        flush=True,
                    )
                    continue
                current = verdicts(report)
                runs.append(current)
                diff = differences(runs[0], current)
                if not diff:
                    same = "identical" if len(runs) > 1 else "the reference for the next runs"
                    print(f"run {index}/{args.runs}: {len(current)} items, {same} ({took})")
                else:
                    print(
                        f"run {index}/{args.runs}: {len(current)} items, "
                        f"{len(diff)} differ from the first run ({took}):"
                    )
                    for line in diff:
                        print(f"  {line}")
                for item in {line.split(": ", 1)[0] for line in diff}:
                    unstable.setdefault(item, [])
                sys.stdout.flush()
    except KeyboardInterrupt:
        print("interrupted; the background load is stopped", file=sys.stderr)
        return 130
    minutes = (time.monotonic() - started) / 60
    items = len(runs[0]) if runs else 0
    print(
        f"{len(runs)} of {args.runs} runs compared, {items} items each, in {minutes:.1f} min "
        f"with {args.load} busy processes"
    )
    if unstable:
        print(f"UNSTABLE: {len(unstable)} items differ between runs:")
        for item in sorted(unstable):
            seen = [show(run.get(item)) for run in runs]
            print(f"  {item}: {_tally(seen)}")
    elif runs:
        print("stable: every run gave every item the same verdict")
    if unstable or broken or not runs:
        print(f"reports and logs kept in {folder}")
        return 1
    if args.keep is None:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    return 0


def _tally(seen: Sequence[str]) -> str:
    counts: Mapping[str, int] = {v: seen.count(v) for v in dict.fromkeys(seen)}
    return ", ".join(f"{verdict} x{count}" for verdict, count in counts.items())


if __name__ == "__main__":
    sys.exit(main())
