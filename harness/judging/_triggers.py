"""Triggers: the exchange a check is about, declared with the check.

Every check names its trigger (`@check(..., trigger=sent("tools/call", name="echo"))`).
Judging (harness/judging/_judge.py) looks for it before the check's rule runs: when it never
arose the item is not applicable, or blocked by whatever stopped the client getting
there; and a PASS must cite it among its evidence. So "the behaviour was seen" is
enforced in one place, not hoped for in every judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.protocol import same_json

if TYPE_CHECKING:
    from harness.running import ScenarioRun

__all__ = [
    "Trigger",
    "asked",
    "client_sent",
    "fault",
    "http",
    "server_sent",
    "trigger",
]

Finder = Callable[["ScenarioRun"], list[Mapping[str, Any]]]


@dataclass(frozen=True)
class Trigger:
    description: str
    """What has to happen for the check to apply, in words: a clause ("the client sent
    tools/call") or a thing ("a tools/call of add"). A BLOCKED or N/A item's reason quotes
    it ("not judged: this never happened: the client sent tools/call; the cause: ...")."""
    find: Finder
    """The run's records (transcript entries, operations as JSON) that are the trigger."""


def trigger(description: str, find: Finder) -> Trigger:
    """A trigger of the check's own making, for what the helpers below cannot say."""
    return Trigger(description, find)


def _params_match(message: Mapping[str, Any], params: Mapping[str, Any]) -> bool:
    got = message.get("params")
    if not params:
        return True
    if not isinstance(got, dict):
        return False
    return all(key in got and same_json(got[key], value) for key, value in params.items())


def client_sent(method: str | None = None, /, **params: Any) -> Trigger:
    """The client sent a message of `method` (any message if None) whose params hold
    `params`; requests the mock refused count: the client did send them."""
    what = method or "any message"
    shown = ", ".join(f"{k}={v!r}" for k, v in params.items())

    def find(run: ScenarioRun) -> list[Mapping[str, Any]]:
        return [
            m
            for m in run.client_messages()
            if (method is None or m["message"].get("method") == method)
            and _params_match(m["message"], params)
        ]

    return Trigger(f"the client sent {what}" + (f" ({shown})" if shown else ""), find)


def server_sent(method: str, /, **params: Any) -> Trigger:
    """The mock sent a request or notification of `method` to the client."""

    def find(run: ScenarioRun) -> list[Mapping[str, Any]]:
        return [
            e
            for e in run.entries
            if e["kind"] == "message"
            and e.get("direction") == "server"
            and e["message"].get("method") == method
            and _params_match(e["message"], params)
        ]

    return Trigger(f"the server sent {method}", find)


def asked(op: str, first_arg: Any = None) -> Trigger:
    """The harness asked the client for operation `op` (with this first argument)."""

    def find(run: ScenarioRun) -> list[Mapping[str, Any]]:
        return [
            o.to_json()
            for o in run.operations
            if o.op == op and (first_arg is None or same_json(o.first_arg, first_arg))
        ]

    shown = f"({first_arg!r})" if first_arg is not None else ""
    return Trigger(f"the harness asked the client to {op}{shown}", find)


def http(method: str) -> Trigger:
    """The client made an HTTP request with this method (GET, POST, DELETE) to the MCP
    endpoint (an authorization server's or a document's is not one)."""

    def find(run: ScenarioRun) -> list[Mapping[str, Any]]:
        return list(run.endpoint_requests(method))

    return Trigger(f"the client sent an HTTP {method} to the MCP endpoint", find)


def fault(kind: str) -> Trigger:
    """The mock carried out a scripted fault of this kind (a dropped connection, ...)."""

    def find(run: ScenarioRun) -> list[Mapping[str, Any]]:
        return [e for e in run.of_kind("fault") if (e.get("fault") or {}).get("kind") == kind]

    return Trigger(f"the mock carried out a {kind} fault", find)
