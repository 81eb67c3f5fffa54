"""Falsifiability of the checks behind driver protocol 1.1 (harness/suite/utilities.py):
setLevel, subscribe and completion only if declared, updates and completions surfaced,
roots list_changed, tasks, subscriptions/listen, and an SSE response left open.

Same structure as tests/harness/suite/test_mutations.py: each mutant breaks one rule; its run gets the
named verdicts and every other check of the run still passes.
"""

from __future__ import annotations

import dataclasses
import functools
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import anyio
import httpx
import pytest
from _mutation import Case, assert_mutant_fails_exactly, outcomes, run_case, verdicts
from variant_clients import RootsChangedAtConnect, SetsLevelAtConnect

from harness.clients import ClientError, ReferenceClient
from harness.clients._contract import ClientEvent
from harness.clients._driver import DriverClient
from harness.clients.reference._http import HttpTransport
from harness.protocol import ErrorResponse, Notification, Request, RequestId, Response

# -- the mutants -------------------------------------------------------------------------------


class SetsLevelAnyway(ReferenceClient):
    """LOG, LC-7: sends logging/setLevel whatever the server declared."""

    async def set_log_level(self, level: str) -> dict[str, Any]:
        await self._request("logging/setLevel", {"level": level})
        return {}


class SetLevelNoop(ReferenceClient):
    """LOG: reports a level as set without telling the server."""

    async def set_log_level(self, level: str) -> dict[str, Any]:
        return {}


class SetsAnotherLevel(ReferenceClient):
    """LOG: asked for a level, asks the server for another."""

    async def set_log_level(self, level: str) -> dict[str, Any]:
        return await super().set_log_level("error" if level != "error" else "debug")


class SubscribesAnyway(ReferenceClient):
    """RES, LC-7: subscribes although the server did not declare resources.subscribe."""

    async def subscribe_resource(self, uri: str) -> dict[str, Any]:
        await self._request("resources/subscribe", {"uri": uri})
        return {}


class DropsResourceUpdates(ReferenceClient):
    """RES: never hands notifications/resources/updated to the application."""

    def _emit(self, event: ClientEvent) -> None:
        if event.method != "notifications/resources/updated":
            super()._emit(event)


class FirstTemplatePageOnly(ReferenceClient):
    """RES, TL-1: lists resource templates without following nextCursor."""

    async def list_resource_templates(self) -> dict[str, Any]:
        page = await self._request("resources/templates/list")
        return {"resourceTemplates": page.get("resourceTemplates", [])}


class CompletesAnyway(ReferenceClient):
    """COMPLETION, LC-7: asks for completions although the server declared none."""

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        return await self._request(
            "completion/complete", {"ref": dict(ref), "argument": dict(argument)}
        )


class LosesCompletionValues(ReferenceClient):
    """COMPLETION: surfaces the first completion value only."""

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        result = await super().complete(ref, argument, context)
        completion = dict(result["completion"])
        completion["values"] = completion["values"][:1]
        return {"completion": completion}


class SilentRootsChange(ReferenceClient):
    """ROOTS: declares roots.listChanged, and never says the roots changed."""

    async def set_roots(self, roots: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        self._roots = tuple(dict(root) for root in roots)
        return {}


class PollsFromCache(ReferenceClient):
    """TL-9: answers get_task from the task it was given, without tasks/get."""

    async def get_task(self, task_id: str) -> dict[str, Any]:
        return {"taskId": task_id, "status": "working"}


class SurfacesCreatedStatus(ReferenceClient):
    """TL-9: polls with tasks/get, and surfaces the status the task was created with."""

    async def get_task(self, task_id: str) -> dict[str, Any]:
        return {**await super().get_task(task_id), "status": "working"}


class CancelsTaskByNotification(ReferenceClient):
    """TL-9: cancels a task with notifications/cancelled for its tools/call."""

    def _dispatch(self, message: Request | Notification | Response | ErrorResponse) -> None:
        if isinstance(message, Response) and isinstance(message.result, dict):
            task = message.result.get("task")
            if isinstance(task, dict) and message.id is not None:
                self._created_by: dict[str, RequestId] = getattr(self, "_created_by", {})
                self._created_by[str(task.get("taskId"))] = message.id
        super()._dispatch(message)

    async def cancel_task(self, task_id: str) -> dict[str, Any]:
        request_id = getattr(self, "_created_by", {})[task_id]
        cancelled = Notification("notifications/cancelled", {"requestId": request_id})
        await self._send(cancelled.to_json())
        return {"taskId": task_id, "status": "cancelled"}


class ListensForEverything(ReferenceClient):
    """LISTEN: opens subscriptions/listen with a filter of its own, not the one asked for."""

    async def listen(
        self, notifications: Mapping[str, Any], *, subscription: int | None = None
    ) -> dict[str, Any]:
        wanted = {"toolsListChanged": True, "promptsListChanged": True}
        return await super().listen(wanted, subscription=subscription)


class ListensOnce(ReferenceClient):
    """LISTEN: never listens again once the server ended the stream."""

    async def _listen_loop(self, notifications: dict[str, Any], subscription: Any) -> None:
        try:
            await self._request(
                "subscriptions/listen",
                {"notifications": notifications},
                on_id=functools.partial(self._route_listen, subscription, []),
            )
        except ClientError as exc:
            self._log(f"listen ended: {exc}")


class SurfacesUnderNewestListen(ReferenceClient):
    """LISTEN, ST-5: surfaces what arrives on any listen stream under the subscription
    opened last, whatever subscriptionId it carries."""

    def _emit(self, event: ClientEvent) -> None:
        keys = [s.key for s in self._subscriptions.values()]
        if event.event == "notification" and event.subscription is not None and keys:
            event = dataclasses.replace(event, subscription=keys[-1])
        super()._emit(event)


class SurfacesUnderEveryListen(ReferenceClient):
    """LISTEN, ST-5: surfaces what arrives on a listen stream under every open
    subscription (a broadcast instead of demultiplexing)."""

    def _emit(self, event: ClientEvent) -> None:
        if event.event != "notification" or event.subscription is None:
            super()._emit(event)
            return
        for key in dict.fromkeys(s.key for s in self._subscriptions.values()):
            super()._emit(dataclasses.replace(event, subscription=key))


class RoutesByKind(ReferenceClient):
    """LISTEN, ST-5: surfaces a change notification under every open subscription whose
    acknowledged filter takes its kind, instead of the one its subscriptionId names."""

    _FLAGS: ClassVar[dict[str, str]] = {
        "notifications/tools/list_changed": "toolsListChanged",
        "notifications/prompts/list_changed": "promptsListChanged",
        "notifications/resources/list_changed": "resourcesListChanged",
    }

    def _emit(self, event: ClientEvent) -> None:
        flag = self._FLAGS.get(event.method)
        if event.event != "notification" or event.subscription is None or flag is None:
            super()._emit(event)
            return
        subscriptions = {id(s): s for s in self._subscriptions.values()}.values()
        for subscription in subscriptions:
            if subscription.notifications.get(flag) is True:
                super()._emit(dataclasses.replace(event, subscription=subscription.key))


class _SurfacesInTurn(ReferenceClient):
    """Hands each change notification to the application a moment after the one before, as
    a client that works a queue in turn does (all it surfaces for one notification at once)."""

    LAG = 0.1
    _turns = 0
    _last: object = None
    _turn: list[ClientEvent]

    def _emit(self, event: ClientEvent) -> None:
        if event.method not in RoutesByKind._FLAGS:
            super()._emit(event)
            return
        if event.params is not self._last:  # a new notification: a new turn
            self._last = event.params
            self._turns += 1
            self._turn = turn = []
            emit = super()._emit

            async def later(delay: float) -> None:
                await anyio.sleep(delay)
                for each in turn:
                    emit(each)

            self._tasks.start_soon(later, self.LAG * self._turns)
        self._turn.append(event)


class RoutesByKindInTurn(RoutesByKind, _SurfacesInTurn):
    """RoutesByKind (routing by what is open when a notification arrives), surfacing in
    turn: its wrong routing comes out last, after every other (subscription, change) pair,
    so a drive that stopped waiting once each pair had been seen would never see it."""


class SurfacesUnrouted(ReferenceClient):
    """LISTEN: names `listen_routing` but surfaces every notification outside any
    subscription (what a driver that forgets the `listen` field reports)."""

    def _emit(self, event: ClientEvent) -> None:
        super()._emit(dataclasses.replace(event, subscription=None))


class DropsListChanged(ReferenceClient):
    """LISTEN: keeps tools/list_changed from the application (it only refetches)."""

    def _emit(self, event: ClientEvent) -> None:
        if event.method != "notifications/tools/list_changed":
            super()._emit(event)


class _ReadsToTheEnd(HttpTransport):
    async def _read(self, response: httpx.Response, parser: Any, request_id: Any) -> bool:
        # Collects the whole body first, as a plain HTTP client would: on a stream the
        # server leaves open this never ends.
        body = b""
        try:
            async for chunk in response.aiter_bytes():
                body += chunk
        except httpx.HTTPError:
            pass
        events = list(parser.feed(body))
        for event in events:
            if event.data and event.event in (None, "message"):
                self._sink.deliver(event.data)
        return bool(events)


class ReadsToTheEnd(ReferenceClient):
    """HT-3: reads an SSE response to its end before it looks at the messages."""

    _http_transport = _ReadsToTheEnd


CASES = {
    "sets-level-anyway": Case(
        SetsLevelAnyway,
        ("features-set-level-undeclared", "2025-06-18", "stdio"),
        {"features.set-level-only-if-declared": "FAIL"},
    ),
    "set-level-noop": Case(
        SetLevelNoop,
        ("features-set-level", "2024-11-05", "stdio"),
        {"features.set-level-sent": "NOTE"},
    ),
    "sets-another-level": Case(
        SetsAnotherLevel,
        ("features-set-level", "2025-11-25", "http"),
        {"features.set-level-sent": "NOTE"},
    ),
    "subscribes-anyway": Case(
        SubscribesAnyway,
        ("features-subscribe-undeclared", "2025-11-25", "http"),
        {"features.subscribe-only-if-declared": "FAIL"},
    ),
    "drops-resource-updates": Case(
        DropsResourceUpdates,
        ("features-subscribe", "2025-03-26", "http"),
        {"features.resource-updates-surfaced": "NOTE"},
    ),
    "first-template-page-only": Case(
        FirstTemplatePageOnly,
        ("features-resource-templates", "2025-06-18", "stdio"),
        {"features.resource-templates-listed": "WARN"},
    ),
    "completes-anyway": Case(
        CompletesAnyway,
        ("features-completion-undeclared", "2025-06-18", "http"),
        {"features.complete-only-if-declared": "FAIL"},
    ),
    "loses-completion-values": Case(
        LosesCompletionValues,
        ("features-completion", "2025-11-25", "stdio"),
        {"features.completion-surfaced": "NOTE"},
    ),
    "silent-roots-change": Case(
        SilentRootsChange,
        ("features-roots-changed", "2025-11-25", "stdio"),
        {"features.roots-list-changed": "FAIL"},
    ),
    "polls-from-cache": Case(
        PollsFromCache,
        ("tools-tasks-polling", "2025-11-25", "stdio"),
        {"tools.task-polled": "WARN"},
    ),
    "surfaces-created-status": Case(
        SurfacesCreatedStatus,
        ("tools-tasks-polling", "2025-11-25", "http"),
        {"tools.task-polled": "NOTE"},
    ),
    "cancels-task-by-notification": Case(
        CancelsTaskByNotification,
        ("tools-tasks-polling", "2025-11-25", "http"),
        {"tools.task-cancelled": "FAIL"},
    ),
    "listens-for-everything": Case(
        ListensForEverything,
        ("http-listen-relisten", "2026-07-28", "http"),
        {"stateless.listen-opened": "NOTE"},
    ),
    "listens-once": Case(
        ListensOnce,
        ("http-listen-relisten", "2026-07-28", "http"),
        {
            "stateless.relisten-after-end": "NOTE",
            "stateless.listen-notifications-surfaced": "N/A",
        },
    ),
    "surfaces-under-newest-listen": Case(
        SurfacesUnderNewestListen,
        ("listen-two-subscriptions", "2026-07-28", "stdio"),
        {"stateless.listen-correlated": "FAIL"},
    ),
    "surfaces-under-every-listen": Case(
        SurfacesUnderEveryListen,
        ("listen-two-subscriptions", "2026-07-28", "stdio"),
        {"stateless.listen-correlated": "FAIL"},
    ),
    "surfaces-under-every-listen-over-http": Case(
        SurfacesUnderEveryListen,
        ("listen-two-subscriptions", "2026-07-28", "http"),
        {"stateless.listen-correlated": "NOTE"},
    ),
    "routes-by-kind": Case(
        RoutesByKind,
        ("listen-two-subscriptions", "2026-07-28", "stdio"),
        {"stateless.listen-correlated": "FAIL"},
    ),
    "routes-by-kind-in-turn": Case(
        RoutesByKindInTurn,
        ("listen-two-subscriptions", "2026-07-28", "stdio"),
        {"stateless.listen-correlated": "FAIL"},
    ),
    "surfaces-unrouted": Case(
        SurfacesUnrouted,
        ("listen-two-subscriptions", "2026-07-28", "stdio"),
        {"stateless.listen-correlated": "NOTE"},
    ),
    "does-not-relisten-after-restart": Case(
        ListensOnce,
        ("stdio-listen-restart", "2026-07-28", "stdio"),
        {"stateless.relisten-after-restart": "FAIL"},
    ),
    "drops-list-changed": Case(
        DropsListChanged,
        ("http-listen-relisten", "2026-07-28", "http"),
        {"stateless.listen-notifications-surfaced": "NOTE"},
    ),
    "reads-to-the-end": Case(
        ReadsToTheEnd,
        ("http-stream-left-open", "2025-11-25", "http"),
        {"http.stream-left-open-not-blocking": "FAIL"},
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_mutant_fails_exactly_its_checks(name: str) -> None:
    assert_mutant_fails_exactly(name, CASES[name])


@pytest.mark.parametrize("name", sorted(CASES))
def test_reference_client_passes_the_same_runs(name: str) -> None:
    seen = verdicts(ReferenceClient, CASES[name].run)
    assert set(seen.values()) == {"PASS"}, seen


class DoesNotNameListenRouting(ReferenceClient):
    """Listens, but does not say under which subscription it surfaces a notification."""

    @property
    def supports(self) -> frozenset[str]:
        return super().supports - {"listen_routing"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_client_that_does_not_name_listen_routing_is_skipped(transport: str) -> None:
    # Never a PASS, never a FAIL: the correlation cannot be seen, by the client's own word.
    seen = verdicts(DoesNotNameListenRouting, ("listen-two-subscriptions", "2026-07-28", transport))
    assert seen == {"stateless.listen-correlated": "SKIP"}


class PollsOnItsOwn(ReferenceClient):
    """Polls a task it created once by itself, before its application asks (as an SDK
    that follows its tasks may): the application's polls then see later statuses."""

    async def call_tool_as_task(
        self, name: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        created = await super().call_tool_as_task(name, arguments, **kwargs)
        await self._request("tasks/get", {"taskId": created["task"]["taskId"]})
        return created

    async def cancel_task(self, task_id: str) -> dict[str, Any]:
        cancelled = await super().cancel_task(task_id)
        polled = await self._request("tasks/get", {"taskId": task_id})
        if polled.get("status") != "cancelled":  # the mock must not contradict itself
            raise ClientError("other", f"polled after the cancel: {polled}")
        return cancelled


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_client_that_polls_on_its_own_passes(transport: str) -> None:
    # Its polls surface completed twice: what the server answered them, so no FAIL.
    seen = verdicts(PollsOnItsOwn, ("tools-tasks-polling", "2025-11-25", transport))
    assert seen == {"tools.task-polled": "PASS", "tools.task-cancelled": "PASS"}


PYTHON_DRIVER = (
    Path(__file__).resolve().parents[3] / "examples" / "drivers" / "python" / "driver.py"
)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_python_example_driver_names_the_listen_of_each_notification(transport: str) -> None:
    # The same judgement through driver protocol 1.1: `listen` fields on the events.
    def driver() -> DriverClient:
        return DriverClient([sys.executable, str(PYTHON_DRIVER)])

    seen = verdicts(driver, ("listen-two-subscriptions", "2026-07-28", transport))
    assert seen == {"stateless.listen-correlated": "PASS"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_client_that_sets_its_own_level_first_passes(transport: str) -> None:
    # Its first logging/setLevel is its own (info, as it connects); the one it was asked
    # for comes after.
    seen = verdicts(SetsLevelAtConnect, ("features-set-level", "2025-11-25", transport))
    assert seen == {"features.set-level-sent": "PASS"}


ROOTS_CHANGED = "notifications/roots/list_changed"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_client_that_says_its_roots_changed_as_it_connects_passes(transport: str) -> None:
    # The roots/list that first notification would trigger rightly gets the roots of before,
    # and whether it was answered before the harness changed them was a race: the script
    # awaits the notification of the change (once tools were listed), and asks after it.
    run = run_case(RootsChangedAtConnect, ("features-roots-changed", "2025-11-25", transport))
    assert outcomes(run) == {"features.roots-list-changed": "PASS"}
    messages = [e for e in run.entries if e["kind"] == "message"]
    changes = [
        e["seq"]
        for e in messages
        if e["direction"] == "client" and e["message"].get("method") == ROOTS_CHANGED
    ]
    (asked,) = [
        e["seq"]
        for e in messages
        if e["direction"] == "server" and e["message"].get("method") == "roots/list"
    ]
    assert len(changes) == 2
    assert asked > changes[1], "roots/list was sent before the change it is about"
