"""Secrets never reach a recording: what is taken out, and the placeholder put in.

Four nets, each naming what it caught in the placeholder (`<redacted:NAME>`):

- a member whose name says it holds a secret (`authorization`, `api_key`, `password`,
  `token`, `cookie`, `secret`, ...), in any JSON object, whatever its value;
- text that has the form of a credential wherever it appears inside a string: a bearer or
  basic scheme, a JWT, a URL query parameter or a `NAME=value` pair whose name is secret-like,
  and the well-known key prefixes (`sk-`, `ghp_`, `xoxb-`, `AKIA`, ...);
- values known to be secrets wherever they appear: the credentials the client sent in its
  headers (HTTP), and the environment's secret-like variables (a server that echoes its
  own `GITHUB_TOKEN` is caught by the value, under that variable's name);
- the caller's own regular expressions (`--redact`), named `custom`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["PLACEHOLDER", "Redactor", "is_secret_name"]

PLACEHOLDER = "<redacted:{name}>"

# A name (of a member, header, query parameter, variable) that holds a credential.
_SECRET_NAME = re.compile(
    r"(?i)(^|[_\-.])(authorization|auth|api[_\-]?key|apikey|access[_\-]?key|private[_\-]?key|"
    r"client[_\-]?secret|secret|password|passwd|pwd|passphrase|token|access[_\-]?token|"
    r"refresh[_\-]?token|id[_\-]?token|bearer|session[_\-]?id|sessionid|cookie|set[_\-]cookie|"
    r"credentials?|signature|sig)([_\-.]|$)"
)
# Members whose name contains "token" but that the protocol itself uses for plain values.
_PROTOCOL_NAMES = frozenset({"progressToken", "maxTokens", "nextCursor", "cursor"})

# Credential shapes inside any text; group "value" is what is replaced.
_SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # A scheme and a credential (one with a digit in it: "Bearer authentication" is prose).
    (
        "bearer",
        re.compile(r"(?i)\b(?:bearer|token)\s+(?P<value>(?=\S*\d)[A-Za-z0-9\-._~+/]{8,}=*)"),
    ),
    ("basic", re.compile(r"(?i)\bbasic\s+(?P<value>(?=\S*[\d=])[A-Za-z0-9+/]{8,}={0,2})")),
    ("jwt", re.compile(r"(?P<value>\beyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*)")),
    (
        "api_key",
        re.compile(
            r"(?P<value>\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{16,}|\bgh[pousr]_[A-Za-z0-9]{20,}|"
            r"\bgithub_pat_[A-Za-z0-9_]{20,}|\bxox[abposr]-[A-Za-z0-9\-]{10,}|"
            r"\bAKIA[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_\-]{30,})"
        ),
    ),
    (
        "query",
        re.compile(
            r"(?i)[?&;](?P<name>[A-Za-z0-9_\-.]*(?:token|key|secret|password|passwd|auth|"
            r"signature|sig|session|code|credential)[A-Za-z0-9_\-.]*)=(?P<value>[^&#\s\"'<>]+)"
        ),
    ),
    (
        "assignment",
        re.compile(
            # An environment-like assignment: an upper-case name, then `=`.
            r"\b(?P<name>[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|"
            r"PRIVATE_?KEY|CREDENTIALS?|COOKIE)[A-Z0-9_]*)=(?P<value>[^\s\"'&,;<>]{4,})"
        ),
    ),
)

# Too short to be a secret worth a search through every string (and too likely to be a word).
_MIN_KNOWN_LENGTH = 6


def _looks_like_a_credential(value: str) -> bool:
    """An environment value worth searching every string for: not a word, a path or a
    flag (`AUTH_HOST=localhost` must not take every "localhost" out of a recording)."""
    if len(value) < 8 or any(c.isspace() for c in value) or value.startswith(("/", "~", ".")):
        return False
    kinds = (
        any(c.isalpha() for c in value),
        any(c.isdigit() for c in value),
        any(not c.isalnum() for c in value),
    )
    return sum(kinds) >= 2


def is_secret_name(name: str) -> bool:
    """Whether a member, header or variable called `name` holds a credential."""
    return name not in _PROTOCOL_NAMES and bool(_SECRET_NAME.search(_snake(name)))


def _snake(name: str) -> str:
    # apiKey -> api_Key, accessToken -> access_Token: the name's words, separated.
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)


def placeholder(name: str) -> str:
    return PLACEHOLDER.format(name=name.lower())


class Redactor:
    """Takes secrets out of JSON values and text, counting what it took by name."""

    def __init__(
        self,
        extra: Iterable[str] = (),
        *,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._extra = [re.compile(pattern) for pattern in extra]
        self._known: dict[str, str] = {}  # secret value -> its name
        self.found: dict[str, int] = {}
        for name, value in (environ or {}).items():
            if is_secret_name(name) and _looks_like_a_credential(value):
                self.add_known(value, name)

    def add_known(self, value: str, name: str) -> None:
        """A value to take out wherever it appears (a header's credential, a variable's)."""
        value = value.strip()
        if len(value) >= _MIN_KNOWN_LENGTH:
            self._known.setdefault(value, name)
        # "Bearer abc": the token alone is the secret too.
        scheme, _, rest = value.partition(" ")
        if rest and scheme.lower() in ("bearer", "basic", "token") and len(rest) >= 6:
            self._known.setdefault(rest.strip(), name)

    def add_header(self, name: str, value: str) -> None:
        """A header the client or server sent: its value is known to be secret if its name
        says so; cookies by each value."""
        lowered = name.lower()
        if lowered in ("cookie", "set-cookie"):
            for part in value.split(";"):
                key, sep, cookie = part.partition("=")
                if sep:
                    self.add_known(cookie, f"cookie {key.strip()}")
        elif is_secret_name(lowered) or lowered.startswith("x-api"):
            self.add_known(value, lowered)

    def _count(self, name: str) -> str:
        key = name.lower()
        self.found[key] = self.found.get(key, 0) + 1
        return placeholder(name)

    def has_known(self) -> bool:
        return bool(self._known)

    def known(self, value: str) -> str:
        """`value` with the secrets known by value replaced (the last pass on a whole file)."""
        for secret in sorted(self._known, key=len, reverse=True):
            if secret in value:
                value = value.replace(secret, self._count(self._known[secret]))
        return value

    def text(self, value: str) -> str:
        """`value` with every secret in it replaced by its placeholder."""
        value = self.known(value)
        for name, shape in _SHAPES:
            value = shape.sub(functools.partial(self._replace, name=name), value)
        for pattern in self._extra:
            value = pattern.sub(lambda m: self._count("custom"), value)
        return value

    def _replace(self, found: re.Match[str], *, name: str) -> str:
        secret = found.group("value")
        if secret.startswith("<redacted:"):
            return found.group(0)
        named = found.groupdict().get("name") or name
        start, end = found.span("value")
        whole_start = found.start()
        text = found.group(0)
        return text[: start - whole_start] + self._count(named) + text[end - whole_start :]

    def json(self, value: Any) -> Any:
        """A copy of the JSON `value` with every secret replaced."""
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                secret = isinstance(item, str) and item and not item.startswith("<redacted:")
                if secret and is_secret_name(key):
                    out[key] = self._count(key)
                    continue
                out[key] = self.json(item)
            return out
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, str):
            return self.text(value)
        return value

    @staticmethod
    def is_placeholder(value: Any) -> bool:
        return isinstance(value, str) and "<redacted:" in value
