"""The official conformance runner's expected-failures YAML, read as a baseline.

The runner (`@modelcontextprotocol/conformance`, `--expected-failures FILE`) reads

    server:
      - tools-call-with-progress          # a whole scenario may fail
    client:
      - sse-retry
      - request-metadata:sep-2575-client-populates-meta   # only this check may fail

Only `client:` entries concern a client; each names one of the runner's client scenarios
(`<scenario>`) or one check of it (`<scenario>:<check-id>`). `_MAP` says which of our checks
judge the same requirements. An id without a counterpart (authorization, JSON Schema
dialects, elicitation defaults: not judged here yet) is kept as a note, never silently.

The file is parsed by hand: the runner's format is a mapping of two lists of plain
strings, so the subset below (block lists, `[]`, comments, quotes) covers every file it
accepts, and mcp-testbench stays free of a YAML dependency for one small format. Anything
outside that subset is an error that names its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["OfficialBaseline", "OfficialBaselineError", "load_official", "parse_official"]

# The runner's client scenarios, and its check ids within them, to our check ids.
_SCENARIOS: dict[str, tuple[str, ...]] = {
    "initialize": (
        "lifecycle.initialize-first",
        "lifecycle.initialized-notification",
        "lifecycle.offers-supported-version",
    ),
    "tools_call": ("tools.call-result",),
    "sse-retry": ("http.retry-honoured", "http.resume-with-last-event-id"),
    "request-metadata": (
        "stateless.meta-on-every-request",
        "stateless.standard-headers",
        "stateless.retry-after-unsupported-version",
    ),
    "http-standard-headers": ("stateless.standard-headers",),
    "http-custom-headers": ("stateless.x-mcp-header",),
    "sep-2322-client-request-state": ("stateless.mrtr-retry",),
}
_CHECKS: dict[str, tuple[str, ...]] = {
    "sse-retry:client-sse-retry-timing": ("http.retry-honoured",),
    "sse-retry:client-sse-last-event-id": ("http.resume-with-last-event-id",),
    "sse-retry:client-sse-graceful-reconnect": ("http.resume-with-last-event-id",),
    "request-metadata:sep-2575-client-populates-meta": ("stateless.meta-on-every-request",),
    "request-metadata:sep-2575-client-sends-client-info": ("stateless.meta-on-every-request",),
    "request-metadata:sep-2575-http-client-sends-version-header": ("stateless.standard-headers",),
    "request-metadata:sep-2575-http-version-header-matches-meta": ("stateless.standard-headers",),
    "request-metadata:sep-2575-client-retry-supported-version": (
        "stateless.retry-after-unsupported-version",
    ),
    "http-standard-headers:sep-2243-client-includes-standard-headers": (
        "stateless.standard-headers",
    ),
    "http-custom-headers:sep-2243-client-supports-custom-headers": ("stateless.x-mcp-header",),
    "http-custom-headers:sep-2243-client-mirrors-designated-params": ("stateless.x-mcp-header",),
    "http-custom-headers:sep-2243-client-omit-null": ("stateless.x-mcp-header",),
    "sep-2322-client-request-state:sep-2322-client-request-state-echoed": ("stateless.mrtr-retry",),
    "sep-2322-client-request-state:sep-2322-client-jsonrpc-id-different": ("stateless.mrtr-retry",),
}


class OfficialBaselineError(ValueError):
    pass


@dataclass(frozen=True)
class OfficialBaseline:
    entries: dict[str, tuple[str, ...]]
    """Each `client:` entry as written, to the check ids it stands for."""
    notes: tuple[str, ...]
    """What was read but stands for nothing here, one sentence each."""


def _scalar(text: str, where: str) -> str:
    text = text.split(" #", 1)[0].strip() if not text.startswith(("'", '"')) else text.strip()
    if text[:1] in ("'", '"'):
        quote = text[0]
        end = text.find(quote, 1)
        rest = text[end + 1 :].strip() if end > 0 else "?"
        if end < 0 or (rest and not rest.startswith("#")):
            raise OfficialBaselineError(f"{where}: unbalanced quotes in {text!r}")
        return text[1:end]
    if text[:1] in ("[", "{", "&", "*", "!", "|", ">"):
        raise OfficialBaselineError(
            f"{where}: {text!r} is YAML this reader does not take; write one "
            "'- <scenario>' or '- <scenario>:<check-id>' per line"
        )
    return text


def parse_official(text: str, source: str = "<baseline>") -> dict[str, list[str]]:
    """The sections (`server`, `client`) and their entries, as written."""
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        where = f"{source} line {number}"
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped == "---":
            continue
        if not line.startswith((" ", "-", "\t")):
            key, sep, rest = stripped.partition(":")
            rest = rest.split("#", 1)[0].strip()
            if not sep or key not in ("server", "client"):
                raise OfficialBaselineError(
                    f"{where}: expected 'server:' or 'client:', found {stripped!r}"
                )
            if key in sections:
                raise OfficialBaselineError(f"{where}: '{key}:' appears twice")
            if rest not in ("", "[]"):
                raise OfficialBaselineError(
                    f"{where}: '{key}:' takes a list, one '- entry' per line below it"
                )
            sections[key] = []
            current = key
            continue
        if "\t" in line[: len(line) - len(line.lstrip())]:
            raise OfficialBaselineError(f"{where}: indent with spaces, not tabs")
        if not stripped.startswith("- ") and stripped != "-":
            raise OfficialBaselineError(
                f"{where}: expected '- <scenario>' under '{current or 'client'}:', "
                f"found {stripped!r}"
            )
        if current is None:
            raise OfficialBaselineError(f"{where}: a list entry before 'server:' or 'client:'")
        entry = _scalar(stripped[1:].strip(), where)
        if not entry:
            raise OfficialBaselineError(f"{where}: an empty entry")
        scenario, sep, check = entry.partition(":")
        if sep and (check.startswith(" ") or not scenario or not check.strip()):
            raise OfficialBaselineError(
                f"{where}: {entry!r} is not '<scenario>' or '<scenario>:<check-id>' "
                "(no space after the colon)"
            )
        sections[current].append(entry)
    return sections


def load_official(path: Path) -> OfficialBaseline:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise OfficialBaselineError(f"--mcp-baseline {path}: no such file") from None
    sections = parse_official(text, str(path))
    entries: dict[str, tuple[str, ...]] = {}
    notes: list[str] = []
    if sections.get("server"):
        notes.append(
            f"{len(sections['server'])} 'server:' entries ignored: they are about servers, "
            "and mcp-testbench tests clients"
        )
    for entry in sections.get("client", []):
        scenario = entry.partition(":")[0]
        mapped = _CHECKS.get(entry) or (None if ":" in entry else _SCENARIOS.get(entry))
        if mapped:
            entries[entry] = mapped
        elif scenario in _SCENARIOS:
            notes.append(
                f"'{entry}': no check of ours judges that check of '{scenario}' alone; "
                f"write '{scenario}' to expect its checks ({', '.join(_SCENARIOS[scenario])})"
            )
        else:
            why = (
                "authorization is not judged by mcp-testbench yet"
                if scenario.startswith("auth/")
                else "no check of mcp-testbench judges it"
            )
            notes.append(f"'{entry}' has no counterpart here ({why}); ignored")
    return OfficialBaseline(entries, tuple(notes))
