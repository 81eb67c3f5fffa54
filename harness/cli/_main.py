"""The `mcp-testbench` command line: run the suite (or a conformance client), serve a
script, validate scripts, record a real server into a script, fuzz a client.

It lives in harness (the product side) because `run` drives pytest; `serve`, `validate`
and `record` only call into mock_servers, which stays free of pytest.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Any

from harness.cli._fuzz_command import add_fuzz_parser, fuzz_command
from harness.cli._record_command import add_record_parser, record_command
from harness.cli._run_command import DEFAULT_REPORT_DIR, INTERRUPTED_EXIT, REPORT_FILES
from harness.protocol import REVISIONS
from mock_servers import ScriptError, find_script, load_script, package_version

__all__ = ["main"]

_PYTEST_USAGE_ERROR = 4
"""pytest's exit code when it ran nothing: its error says why, and no summary was printed."""


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {text}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number above 0, not {text}")
    return value


def _report_path(text: str) -> Path:
    path = Path(text)
    if path.suffix not in (".json", ".md", ".html"):
        raise argparse.ArgumentTypeError(
            f"{text!r}: the file name must end in .json, .md or .html (the report's format)"
        )
    return path


def _host_port(value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not HOST:PORT; write for example 127.0.0.1:8765 (port 0 picks a free one)"
        )
    return host.strip("[]"), int(port)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcp-testbench",
        description="Conformance test harness and mock servers for MCP clients.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser(
        "serve",
        help="run a mock server from a script",
        description=(
            "Run a mock MCP server that replays SCRIPT, for a client to connect to. With no "
            "--revision it answers whatever revision the client speaks among those the script "
            "allows, and each new HTTP session (or stdio process) starts the script afresh. "
            "One line per message goes to stderr."
        ),
    )
    serve.add_argument(
        "script",
        type=Path,
        help="a script file (see docs/scripts.md), or a bundled one's name, "
        "e.g. tools/list-and-call.json",
    )
    where = serve.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--stdio", action="store_true", help="speak MCP on stdin/stdout (for a client to spawn)"
    )
    where.add_argument(
        "--http",
        type=_host_port,
        metavar="HOST:PORT",
        help="serve Streamable HTTP on HOST:PORT (port 0 picks a free one); "
        "2024-11-05 uses HTTP+SSE instead: add --sse-legacy",
    )
    serve.add_argument(
        "--revision",
        choices=REVISIONS,
        help="speak only this revision (default: the one each client asks for, "
        "among the script's revisions)",
    )
    serve.add_argument(
        "--transcript", type=Path, metavar="PATH", help="write the transcript (JSON Lines) here"
    )
    serve.add_argument(
        "--sse-legacy",
        action="store_true",
        help="with --http: serve the 2024-11-05 HTTP+SSE transport instead of Streamable HTTP",
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="with --http: allow a host other than loopback (the mock has no authentication)",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="with --http: answer requests whose Host is NAME too (a proxy's or a container's "
        "name); other names than loopback get 421, against DNS rebinding (repeatable)",
    )
    serve.add_argument(
        "--max-sessions",
        type=_positive_int,
        metavar="N",
        help="with --http: the most live sessions kept; a new one past it gets 503 (default 1000)",
    )
    serve.add_argument(
        "--session-idle",
        type=_positive_float,
        metavar="SECONDS",
        help="with --http: a session with no request or stream for this long may be dropped "
        "to make room (default 600)",
    )
    serve.add_argument(
        "--shared-script",
        action="store_true",
        help="with --http: one script run for every session (a second client goes on where "
        "the first stopped) instead of a fresh run per session",
    )
    serve.add_argument(
        "--quiet", action="store_true", help="no line per message on stderr (errors still show)"
    )

    run = commands.add_parser(
        "run",
        help="run the conformance suite against a client; print a summary, write the reports",
        description=(
            "Run the conformance suite (through pytest) against a Python client (--client), "
            "a driver for a client in any language (--driver), or, with neither, the bundled "
            "reference client. Prints a summary; writes report.html, results.json and "
            "junit.xml into ./mcp-testbench-report/ (see --report-dir). Exits non-zero when "
            "an item FAILs or is BLOCKED. Arguments after -- go to pytest."
        ),
    )
    _client_options(run)
    _conformance_options(run)
    where = run.add_mutually_exclusive_group()
    where.add_argument(
        "--report-dir",
        type=Path,
        default=DEFAULT_REPORT_DIR,
        metavar="DIR",
        help=f"write {', '.join(REPORT_FILES)} into DIR (default: ./{DEFAULT_REPORT_DIR}/, "
        "created; the files of an earlier run are replaced)",
    )
    where.add_argument(
        "--no-report",
        action="store_true",
        help="write no report folder (the summary is still printed)",
    )
    run.add_argument(
        "--report",
        type=_report_path,
        action="append",
        metavar="PATH",
        help="also write the results to PATH (.json, .md or .html); repeatable",
    )
    run.add_argument(
        "--baseline", type=Path, metavar="FILE", help="expected failures (see docs/baseline.md)"
    )
    _pytest_args(run)
    _baseline_parser(commands)
    _compare_parser(commands)

    validate = commands.add_parser(
        "validate",
        help="check scripts against the format and the MCP schemas",
        description="Check each SCRIPT (or every *.json under a folder) and print every "
        "problem found, one a line; exit 1 if any is invalid. A path that is not here names "
        "a bundled script or folder (tools/list-and-call.json, tools/).",
    )
    validate.add_argument("scripts", nargs="+", type=Path, metavar="SCRIPT")
    add_record_parser(commands, _host_port)
    add_fuzz_parser(commands)
    return parser


def _client_options(parser: argparse.ArgumentParser) -> None:
    """Who is tested and on what: shared by `run` and `baseline`."""
    who = parser.add_mutually_exclusive_group()
    who.add_argument(
        "--client", metavar="MODULE:ATTR", help="a factory returning the client under test"
    )
    who.add_argument("--driver", metavar="CMD", help='a driver command, e.g. "node driver.mjs"')
    parser.add_argument(
        "--revision", action="append", choices=REVISIONS, help="only this revision (repeatable)"
    )
    parser.add_argument(
        "--transport",
        action="append",
        choices=("stdio", "http", "sse-legacy"),
        help="only this transport (repeatable)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive_float,
        default=10.0,
        metavar="SECONDS",
        help="time the client may take per operation (default 10)",
    )
    parser.add_argument(
        "--concurrency",
        type=_positive_int,
        metavar="N",
        help="scenario runs working at once (default: one per core, at least 2, for a "
        "conformance client; 2 for a driver and for a factory that declares "
        "`concurrent_instances = True`, else 1)",
    )


def _conformance_options(run: argparse.ArgumentParser) -> None:
    """`run` only: a conformance client of the official runner's convention instead."""
    run.add_argument(
        "--conformance-client",
        metavar="CMD",
        help="run CMD as the official conformance runner runs a client (/bin/sh -c 'CMD "
        "URL', MCP_CONFORMANCE_SCENARIO, ...), once per official client scenario served "
        "here, instead of the suite; see docs/conformance-clients.md",
    )
    run.add_argument(
        "--conformance-timeout",
        type=_positive_int,
        metavar="MS",
        help="with --conformance-client: the runner's per-scenario time-out (default 30000)",
    )


def _pytest_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pytest_args", nargs="*", metavar="-- PYTEST_ARGS", help=argparse.SUPPRESS)


def _baseline_parser(commands: Any) -> None:
    baseline = commands.add_parser(
        "baseline",
        help="write or update an expected-failures baseline from a run or a JSON report",
        description=(
            "write: list every failing item (FAIL or BLOCKED) in a new baseline FILE, each "
            "with its verdict's reason to edit. update: bring FILE up to date, keeping the "
            "reasons of entries that still fail, dropping entries that pass or match "
            "nothing, adding new failures; each change is printed. The results come from a "
            "run (the options of `run`; the bundled reference client by default) or from "
            "--from REPORT.json. Update from a run of everything the baseline covers: an "
            "entry outside the run matches nothing and goes. See docs/baseline.md."
        ),
    )
    baseline.add_argument("action", choices=("write", "update"))
    baseline.add_argument("file", type=Path, metavar="FILE", help="the baseline (JSON)")
    baseline.add_argument(
        "--from",
        dest="source",
        type=Path,
        metavar="REPORT",
        help="read the results of an earlier run (a .json report) instead of running",
    )
    _client_options(baseline)
    _pytest_args(baseline)


def _compare_parser(commands: Any) -> None:
    compare = commands.add_parser(
        "compare",
        help="several clients side by side: one HTML page and one markdown table",
        description=(
            "Compare clients from their JSON reports (REPORT.json, written by `run --report`), "
            "or run each --client/--driver given, in turn, writing its reports to --out-dir. "
            "Clients are columns, checks rows grouped by area; each cell links to its "
            "evidence in that client's HTML report (REPORT.html beside REPORT.json, or "
            "report.html beside a run's results.json; when there is none, one is written from "
            "the JSON beside the page). Two reports of one client are told apart by their "
            "paths. See docs/compare.md."
        ),
    )
    compare.add_argument("reports", nargs="*", type=Path, metavar="REPORT.json")
    compare.add_argument(
        "--client",
        dest="runs",
        action="append",
        type=lambda spec: ("client", spec),
        metavar="MODULE:ATTR",
        help="run the suite against this Python client first (repeatable)",
    )
    compare.add_argument(
        "--driver",
        dest="runs",
        action="append",
        type=lambda command: ("driver", command),
        metavar="CMD",
        help="run the suite against this driver first (repeatable)",
    )
    compare.add_argument(
        "--out-dir",
        type=Path,
        default=Path("."),
        metavar="DIR",
        help="where the runs' reports go, as NAME.json and NAME.html (default: here)",
    )
    compare.add_argument(
        "--html", type=Path, metavar="FILE", help="write the HTML page (default compare.html)"
    )
    compare.add_argument(
        "--markdown",
        type=Path,
        metavar="FILE",
        help="write the markdown table (default compare.md)",
    )
    compare.add_argument(
        "--revision", action="append", choices=REVISIONS, help="runs: only this revision"
    )
    compare.add_argument(
        "--transport",
        action="append",
        choices=("stdio", "http", "sse-legacy"),
        help="runs: only this transport",
    )
    compare.add_argument(
        "--timeout",
        type=_positive_float,
        default=10.0,
        metavar="SECONDS",
        help="runs: per operation",
    )
    compare.add_argument(
        "--concurrency", type=_positive_int, metavar="N", help="runs: scenario runs at once"
    )


def _compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    from harness.cli._baseline_command import CommandError, load_results
    from harness.cli._run_command import run_suite
    from harness.reports import compare_pages, slug

    runs: list[tuple[str, str]] = args.runs or []
    if not args.reports and not runs:
        parser.error("compare needs JSON reports, or --client/--driver runs to make them")
    reports: list[Path] = list(args.reports)
    for kind, spec in runs:
        base = args.out_dir / slug(spec)
        reports.append(base.with_suffix(".json"))
        run_suite(
            client=spec if kind == "client" else None,
            driver=spec if kind == "driver" else None,
            report_dir=None,  # its reports go to --out-dir, and nowhere else
            reports=[base.with_suffix(".json"), base.with_suffix(".html")],
            revisions=args.revision or [],
            transports=args.transport or [],
            timeout=args.timeout,
            concurrency=args.concurrency,
        )
    html_out, markdown_out = args.html, args.markdown
    if html_out is None and markdown_out is None:
        html_out, markdown_out = Path("compare.html"), Path("compare.md")
    try:
        loaded = [(path, load_results(path)) for path in reports]
    except CommandError as exc:
        print(f"mcp-testbench compare: {exc}", file=sys.stderr)
        return 2
    try:
        written = compare_pages(loaded, html_out, markdown_out)
    except ValueError as exc:  # a report given twice
        print(f"mcp-testbench compare: {exc}", file=sys.stderr)
        return 2
    for line in written:
        print(f"mcp-testbench compare: {line}")
    return 0


def _validate(paths: Sequence[Path]) -> int:
    files: list[Path] = []
    missing = 0  # a path that is neither here nor bundled: one invalid script
    for path in paths:
        try:
            found = _find_script(path, "validate", folders=True)
        except ScriptError as exc:
            missing += 1
            print(f"invalid: {exc}")
            continue
        files += sorted(found.rglob("*.json")) if found.is_dir() else [found]
    if not files and not missing:
        print("no scripts found in " + ", ".join(map(str, paths)), file=sys.stderr)
        return 1
    bad = problems = missing
    for file in files:
        try:
            script = load_script(file)
        except ScriptError as exc:
            bad += 1
            problems += len(exc.problems)
            for line in exc.lines():
                print(f"invalid: {line}")
            continue
        print(
            f"ok: {file} ({script.name}; {', '.join(script.revisions)}; "
            f"{', '.join(script.transports)}; {len(script.steps)} steps)"
        )
    counted = f" ({problems} problems)" if problems > bad else ""
    print(f"{len(files) + missing} scripts checked, {bad} invalid{counted}")
    return 1 if bad else 0


def _find_script(path: Path, command: str, *, folders: bool = False) -> Path:
    """The script (or folder) `path` names, here or bundled; a bundled one is said on stderr
    (stdout may be a stdio mock's protocol channel)."""
    found = find_script(path, folders=folders)
    if found != path:
        what = "folder" if found.is_dir() else "script"
        print(
            f"mcp-testbench {command}: {path} is not here: using the bundled {what} {found}",
            file=sys.stderr,
            flush=True,
        )
    return found


def _stderr(text: str) -> None:
    print(f"mcp-testbench: {text}", file=sys.stderr, flush=True)


def _serve(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    try:
        script = load_script(_find_script(args.script, "serve"))
        if args.revision is not None:
            script.pick_revision(args.revision)
    except ScriptError as exc:
        print(f"mcp-testbench serve: {exc}", file=sys.stderr)
        return 2
    if args.stdio:
        misplaced = [
            flag
            for flag, given in (
                ("--sse-legacy", args.sse_legacy),
                ("--allow-remote", args.allow_remote),
                ("--allow-host", bool(args.allow_host)),
                ("--max-sessions", args.max_sessions is not None),
                ("--session-idle", args.session_idle is not None),
                ("--shared-script", args.shared_script),
            )
            if given
        ]
        if misplaced:
            parser.error(
                f"{' and '.join(misplaced)} go with --http, not --stdio "
                "(a stdio server is one process per client, each a fresh run)"
            )
        from mock_servers.stdio import serve_stdio_dev

        return serve_stdio_dev(
            script, revision=args.revision, transcript_path=args.transcript, quiet=args.quiet
        )

    from mock_servers.http import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE, serve_dev

    host, port = args.http
    transport = "sse-legacy" if args.sse_legacy else "http"
    speaks = args.revision or "the revision each client speaks"

    def ready(url: str) -> None:
        print(f"mcp-testbench: serving {script.name} ({speaks}, {transport}) at {url}", flush=True)
        print("press Ctrl+C to stop", flush=True)

    try:
        serve_dev(
            script,
            host,
            port,
            revision=args.revision,
            transport=transport,
            transcript_path=args.transcript,
            shared=args.shared_script,
            allow_remote=args.allow_remote,
            allow_hosts=args.allow_host,
            max_sessions=args.max_sessions or DEFAULT_MAX_SESSIONS,
            idle_timeout=args.session_idle or DEFAULT_SESSION_IDLE,
            ready=ready,
            announce=_stderr,
            log=None if args.quiet else _stderr,
        )
    except ScriptError as exc:
        print(f"mcp-testbench serve: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"mcp-testbench serve: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"mcp-testbench serve: {exc}", file=sys.stderr)
        return 2
    return 0


def _run(args: argparse.Namespace) -> int:
    from harness.cli._run_command import run_suite
    from harness.reports import Baseline, BaselineError

    if args.conformance_client is not None or args.conformance_timeout is not None:
        return _run_conformance(args)

    if args.baseline is not None:
        try:  # before pytest starts: a bad file is one line naming --baseline, at once
            Baseline.load(args.baseline, option="--baseline")
        except BaselineError as exc:
            print(f"mcp-testbench run: {exc}", file=sys.stderr)
            return 2
    code = run_suite(
        client=args.client,
        driver=args.driver,
        report_dir=None if args.no_report else args.report_dir,
        reports=args.report or [],
        revisions=args.revision or [],
        transports=args.transport or [],
        baseline=args.baseline,
        timeout=args.timeout,
        concurrency=args.concurrency,
        extra=args.pytest_args,
    )
    if args.no_report and code not in (INTERRUPTED_EXIT, _PYTEST_USAGE_ERROR):
        print("mcp-testbench: no report folder written (--no-report); the summary is above")
    return code


def _run_conformance(args: argparse.Namespace) -> int:
    from harness.cli._conformance_command import run_conformance

    misplaced = [
        option
        for option, given in (
            ("--client", args.client),
            ("--driver", args.driver),
            ("--transport", args.transport),
        )
        if given
    ]
    problem = None
    if args.conformance_client is None:
        problem = "--conformance-timeout goes with --conformance-client CMD"
    elif misplaced:
        problem = (
            "--conformance-client runs the official client scenarios (over HTTP): drop "
            f"{' and '.join(misplaced)}, an option of the suite's runs"
        )
    if problem is None and args.baseline is not None:
        problem = _conformance_baseline_problem(args.baseline)
    if problem is not None:
        print(f"mcp-testbench run: {problem}", file=sys.stderr)
        return 2
    return run_conformance(
        args.conformance_client,
        timeout_ms=args.conformance_timeout,
        report_dir=None if args.no_report else args.report_dir,
        reports=args.report or [],
        revisions=args.revision or [],
        concurrency=args.concurrency,
        baseline=args.baseline,
        extra=args.pytest_args,
    )


def _conformance_baseline_problem(path: Path) -> str | None:
    """What is wrong with a conformance run's --baseline, before pytest starts: it is the
    official runner's expected-failures file, read as the runner reads it."""
    from harness.official import OfficialBaselineError, load_client_baseline

    if path.suffix not in (".yml", ".yaml"):
        return (
            f"--baseline {path}: with --conformance-client the baseline is the official "
            "runner's expected-failures file (.yml or .yaml, 'client:' entries), judged by "
            "its rule; a JSON baseline is the suite's"
        )
    try:
        load_client_baseline(path)
    except OfficialBaselineError as exc:
        return f"--baseline {exc}"
    return None


def _baseline(args: argparse.Namespace) -> int:
    from harness.cli._baseline_command import baseline_command
    from harness.cli._run_command import run_suite

    def run(reports: Sequence[Path]) -> int:
        return run_suite(
            client=args.client,
            driver=args.driver,
            report_dir=None,  # the baseline is what this command writes
            reports=reports,
            revisions=args.revision or [],
            transports=args.transport or [],
            timeout=args.timeout,
            concurrency=args.concurrency,
            extra=args.pytest_args,
        )

    return baseline_command(args.action, args.file, args.source, run)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # What follows `--` goes to pytest. Split here: argparse gives a trailing nargs="*"
    # nothing after `--` once other positionals (baseline's ACTION FILE) came first.
    rest: list[str] = []
    if "--" in argv:
        rest = argv[argv.index("--") + 1 :]
        argv = argv[: argv.index("--")]
    args = parser.parse_args(argv)
    if args.command == "record":  # what follows `--` is the server's command
        return record_command(args, rest)
    if rest and not hasattr(args, "pytest_args"):
        parser.error("arguments after -- go to pytest, with `run` and `baseline` only")
    if rest:
        args.pytest_args = [*args.pytest_args, *rest]
    if args.command in ("run", "compare", "baseline"):
        # While pytest runs, run_suite turns SIGINT and SIGTERM into a wind-down that keeps
        # the reports; before and after it, either one ends the command with one line. Both
        # are handled even where SIGINT came in ignored (a background job of a script, a
        # nohup): there it is only ever sent on purpose, and must not be lost.
        previous = signal.signal(signal.SIGTERM, _interrupt)
        previous_int = signal.signal(signal.SIGINT, _interrupt)
        try:
            if args.command == "run":
                return _run(args)
            if args.command == "compare":
                return _compare(args, parser)
            return _baseline(args)
        except KeyboardInterrupt:
            print("mcp-testbench: interrupted: nothing more was judged", file=sys.stderr)
            return INTERRUPTED_EXIT
        finally:
            signal.signal(signal.SIGTERM, previous)
            signal.signal(signal.SIGINT, previous_int)
    if args.command == "validate":
        return _validate(args.scripts)
    if args.command == "fuzz":
        return fuzz_command(args)
    if args.command == "serve":
        return _serve(args, parser)
    parser.print_help(sys.stdout)
    return 0
