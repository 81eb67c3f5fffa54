"""A live server spoken to as a recording's client spoke to it, for the drift check.

One request at a time, each with its own deadline: over stdio the command is started and
spoken to line by line; over Streamable HTTP each request is a POST answered with JSON or
an event stream (the session id kept, a 2026-07-28 POST with its `Mcp-*` headers). A
request the server sends meanwhile is answered at once with what `answer` gives (its
notifications are read and let go). Nothing here compares: an `Answer` is what came back,
or why nothing did.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import json
import queue
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from harness.protocol import SSEParser, is_stateless
from mock_servers.recording._build import RecordError
from mock_servers.recording._capture import UNPARSED, decode
from mock_servers.recording._output import start_error

__all__ = ["Answer", "Live", "LiveHttp", "LiveStdio", "ServerAsks"]

ServerAsks = Callable[[dict[str, Any]], dict[str, Any]]
"""A request from the server -> the JSON-RPC answer to send back (result or error)."""

_EXIT_GRACE = 1.0  # after stdin closed: the server's time to exit on its own (seconds)
_KILL_GRACE = 0.5  # after SIGTERM, before SIGKILL
_STDERR_KEPT = 20  # lines of a stdio server's stderr kept, to say why it ended


@dataclass
class Answer:
    """The response to one request, or why there is none."""

    message: dict[str, Any] | None
    failure: str | None = None
    ended: bool = False
    """The connection is gone (the process exited): no later request can be answered."""


class Live(Protocol):
    def request(
        self, method: str, params: dict[str, Any] | None, answer: ServerAsks, timeout: float
    ) -> Answer: ...

    def notify(self, method: str, params: dict[str, Any] | None) -> None: ...

    def use_revision(self, revision: str) -> None: ...

    def close(self) -> None: ...


class _Ids:
    def __init__(self) -> None:
        self.last = 0

    def next(self) -> int:
        self.last += 1
        return self.last


def _body(method: str, params: dict[str, Any] | None, request_id: int | None) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        body["id"] = request_id
    body["method"] = method
    if params is not None:
        body["params"] = params
    return body


def _objects(message: Any) -> list[dict[str, Any]]:
    if isinstance(message, dict):
        return [message]
    if isinstance(message, list):
        return [m for m in message if isinstance(m, dict)]
    return []


class LiveStdio:
    """The server `command` starts, its stdin and stdout the protocol channel."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = list(command)
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as exc:
            raise start_error(command, exc) from None
        self.ids = _Ids()
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_KEPT)
        self.readers = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for reader in self.readers:
            reader.start()
        self.gone = False

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.stderr.append(line.decode("utf-8", errors="replace").rstrip())

    def use_revision(self, revision: str) -> None:
        pass  # stdio carries the revision in the messages only

    def _write(self, message: dict[str, Any]) -> bool:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message).encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except (OSError, ValueError):  # a closed pipe: the server is gone
            return False
        return True

    def why_ended(self) -> str:
        status = self.process.poll()
        if status is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                status = self.process.wait(_KILL_GRACE)
        said = next((line for line in reversed(self.stderr) if line.strip()), "")
        what = "the server closed its output" if status is None else f"exited with status {status}"
        return f"{what}{f' (its last words: {said[:200]})' if said else ''}"

    def notify(self, method: str, params: dict[str, Any] | None) -> None:
        self._write(_body(method, params, None))

    def request(
        self, method: str, params: dict[str, Any] | None, answer: ServerAsks, timeout: float
    ) -> Answer:
        if self.gone:
            return Answer(None, "the server had ended", ended=True)
        request_id = self.ids.next()
        if not self._write(_body(method, params, request_id)):
            self.gone = True
            return Answer(None, f"the server {self.why_ended()}", ended=True)
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return Answer(None, f"no answer within {timeout:g} s")
            if line is None:
                self.gone = True
                return Answer(None, f"the server {self.why_ended()}", ended=True)
            for message in _objects(decode(line.decode("utf-8", errors="replace"))):
                if "method" in message:
                    if "id" in message:
                        self._write(answer(message))
                elif message.get("id") == request_id and type(message.get("id")) is int:
                    return Answer(message)

    def close(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        for ask, grace in (
            (None, _EXIT_GRACE),
            (self.process.terminate, _KILL_GRACE),
            (self.process.kill, 5.0),
        ):
            if ask is not None:
                with contextlib.suppress(OSError):
                    ask()
            try:
                self.process.wait(grace)
                break
            except subprocess.TimeoutExpired:
                continue
        for reader in self.readers:
            reader.join(_KILL_GRACE)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


def _header_value(value: str) -> str:
    """A 2026-07-28 header value: as it is when plain visible ASCII, else `=?base64?...?=`."""
    plain = all(" " <= c <= "~" for c in value) and value == value.strip()
    if plain and not (value.startswith("=?base64?") and value.endswith("?=")):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def declared_headers(tools: Any) -> dict[str, list[tuple[tuple[str, ...], str]]]:
    """Per tool, the arguments its input schema designates (`x-mcp-header`) and their
    header names, from a `tools/list` result's `tools`."""
    found: dict[str, list[tuple[tuple[str, ...], str]]] = {}

    def walk(schema: Any, path: tuple[str, ...], into: list[tuple[tuple[str, ...], str]]) -> None:
        properties = schema.get("properties") if isinstance(schema, dict) else None
        for key, sub in (properties or {}).items() if isinstance(properties, dict) else ():
            if isinstance(sub, dict) and isinstance(sub.get("x-mcp-header"), str):
                into.append(((*path, key), sub["x-mcp-header"]))
            walk(sub, (*path, key), into)

    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict) and isinstance(tool.get("name"), str):
            walk(tool.get("inputSchema"), (), found.setdefault(tool["name"], []))
    return found


class LiveHttp:
    """The Streamable HTTP endpoint at `url`, one POST per message."""

    def __init__(self, url: str, timeout: float) -> None:
        self.url = url
        self.ids = _Ids()
        self.session: str | None = None
        self.revision: str | None = None
        self.param_headers: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        try:  # a client of its own: the probe's connection is not the session's
            with httpx.Client(timeout=httpx.Timeout(timeout)) as probe:
                probe.head(url)
        except httpx.InvalidURL as exc:
            raise RecordError(f"--http {url}: not a URL ({exc})") from None
        except (httpx.TransportError, ValueError) as exc:
            raise RecordError(
                f"the server at {url} does not answer ({type(exc).__name__}: "
                f"{exc or 'no answer'}); start it first, or check the URL"
            ) from None
        self.client = httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False)

    def use_revision(self, revision: str) -> None:
        self.revision = revision

    def _headers(self, body: dict[str, Any]) -> dict[str, str]:
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        if self.session is not None:
            headers["mcp-session-id"] = self.session
        revision = self.revision
        if revision is not None and revision >= "2025-06-18":
            headers["mcp-protocol-version"] = revision
        method = body.get("method")
        if revision is not None and is_stateless(revision) and isinstance(method, str):
            params = body.get("params") or {}
            headers["mcp-method"] = method
            source = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
            named = params.get(source.get(method, ""))
            if isinstance(named, str):
                headers["mcp-name"] = _header_value(named)
            arguments = params.get("arguments")
            tool = params.get("name") if method == "tools/call" else None
            for path, name in self.param_headers.get(tool, []) if isinstance(tool, str) else []:
                value: Any = arguments
                for key in path:
                    value = value.get(key) if isinstance(value, dict) else None
                if isinstance(value, bool):
                    headers[f"mcp-param-{name}"] = "true" if value else "false"
                elif isinstance(value, (int, str)):
                    headers[f"mcp-param-{name}"] = _header_value(str(value))
        return headers

    def _post(self, body: dict[str, Any]) -> httpx.Response | str:
        try:
            request = self.client.build_request(
                "POST", self.url, json=body, headers=self._headers(body)
            )
            return self.client.send(request, stream=True)
        except httpx.TransportError as exc:
            return f"the server at {self.url} did not answer ({type(exc).__name__}: {exc})"

    def notify(self, method: str, params: dict[str, Any] | None) -> None:
        sent = self._post(_body(method, params, None))
        if isinstance(sent, httpx.Response):
            sent.close()

    def _answer(self, message: dict[str, Any], answer: ServerAsks) -> None:
        sent = self._post(answer(message))
        if isinstance(sent, httpx.Response):
            sent.close()

    def request(
        self, method: str, params: dict[str, Any] | None, answer: ServerAsks, timeout: float
    ) -> Answer:
        request_id = self.ids.next()
        deadline = time.monotonic() + timeout
        sent = self._post(_body(method, params, request_id))
        if isinstance(sent, str):
            return Answer(None, sent)
        try:
            return self._read(sent, request_id, answer, deadline, timeout)
        finally:
            sent.close()

    def _read(
        self,
        response: httpx.Response,
        request_id: int,
        answer: ServerAsks,
        deadline: float,
        timeout: float,
    ) -> Answer:
        if response.headers.get("mcp-session-id"):
            self.session = response.headers["mcp-session-id"]
        kind = response.headers.get("content-type", "")
        try:
            if kind.startswith("text/event-stream"):
                parser = SSEParser()
                for chunk in response.iter_bytes():
                    for event in parser.feed(chunk):
                        for message in _objects(decode(event.data) if event.data else None):
                            if "method" in message:
                                if "id" in message:
                                    self._answer(message, answer)
                            elif message.get("id") == request_id:
                                return Answer(message)
                    if time.monotonic() > deadline:
                        return Answer(None, f"no answer within {timeout:g} s")
                return Answer(None, "the event stream ended before the answer")
            text = response.read().decode("utf-8", errors="replace")
        except httpx.TimeoutException:
            return Answer(None, f"no answer within {timeout:g} s")
        except httpx.TransportError as exc:
            return Answer(None, f"the connection failed ({type(exc).__name__})")
        decoded = decode(text) if "json" in kind else UNPARSED
        for message in _objects(decoded):
            if message.get("id") == request_id and "method" not in message:
                return Answer(message)
        shown = " ".join(text.split())[:120]
        return Answer(
            None,
            f"HTTP {response.status_code} without an answer" + (f": {shown}" if shown else ""),
        )

    def close(self) -> None:
        if self.session is not None:
            with contextlib.suppress(httpx.HTTPError):
                self.client.delete(self.url, headers={"mcp-session-id": self.session})
        self.client.close()
