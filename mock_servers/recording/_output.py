"""Where a recording goes: the checks before a session starts, and the file at its end."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from mock_servers._jsonfiles import normalised_text
from mock_servers.engine import ScriptError, parse_script
from mock_servers.recording._build import RecordError, build_script, script_name
from mock_servers.recording._capture import Capture
from mock_servers.recording._redact import Redactor

__all__ = ["check_out", "start_error", "write_recording"]


def check_out(out: Path) -> None:
    """RecordError unless a script can be written at `out` (checked before the session, so
    that no session is recorded for nothing)."""
    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise RecordError(f"--out {out} is a folder; name a file, e.g. {out / 'session.json'}")
    if not folder.is_dir():
        raise RecordError(f"--out {out}: the folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK | os.X_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise RecordError(f"--out {out} cannot be written (permission denied); choose another path")


def start_error(command: Sequence[str], exc: OSError) -> RecordError:
    what = exc.strerror or str(exc)
    return RecordError(
        f"the server command did not start: {command[0]}: {what}; check the command after --"
    )


def write_recording(
    capture: Capture,
    out: Path,
    *,
    exact: bool,
    redactor: Redactor,
    name: str | None,
    say: Callable[[str], None],
) -> int:
    """Build the script of `capture`, write it to `out` (whole or not at all), say what was
    written; 0 for a whole session, 1 for a partial one or a script `validate` refuses."""
    try:
        recording = build_script(
            capture, name=script_name(name or out.stem), exact=exact, redactor=redactor
        )
    except RecordError as exc:
        say(f"no script written: {exc}")
        return 2
    text = normalised_text(recording.script)
    # A secret the nets missed may still be one the client sent in a header: a last pass.
    text = redactor.known(text) if redactor.has_known() else text
    try:
        handle, temporary = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent or ".")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, 0o644)  # mkstemp's 0600 is for the temporary name only
        os.replace(temporary, out)
    except OSError as exc:
        say(f"cannot write {out}: {exc.strerror or exc}")
        return 2
    steps = len(recording.script["steps"])
    status = 0
    summary = f"wrote {out} ({recording.script['revisions'][0]}, {steps} steps"
    if recording.violations:
        summary += f", {recording.violations} marked as violations"
    summary += ")"
    if recording.partial:
        summary += "; PARTIAL: " + "; ".join(recording.partial)
        status = 1
    say(summary)
    for note in recording.notes:
        say(f"note: {note}")
    try:
        parse_script(recording.script, source=str(out))
    except ScriptError as exc:
        for line in exc.lines():
            say(f"the script does not validate: {line}")
        status = 1
    return status
