"""The event streams of the HTTP mock: scripted SSE replies, GET and listen streams.

A `SseStream` is a logical stream that can outlive the HTTP response carrying it: a
scripted reply that closes early keeps the rest of its items (and the response) for a
resumption with `Last-Event-ID`, which first replays the events written after that id.
Long-lived streams (the GET stream, 2026-07-28 `subscriptions/listen` streams, the
HTTP+SSE stream) wait for pushes: server-initiated messages, controls from fault steps,
and (HTTP+SSE) jobs that write the answers to POSTed requests.

At 2026-07-28 a `subscriptions/listen` stream carries only the change notifications its
request opted in to (`params.notifications`), each marked with the listen request's id
(`_meta` `io.modelcontextprotocol/subscriptionId`), as is its final response.

`StreamHub` owns them all, for one `HttpMock`, in one event loop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any, Literal

import anyio
from anyio.abc import TaskGroup

from harness.protocol import RequestId
from mock_servers.engine import (
    Engine,
    Transcript,
    jsonrpc_in_text,
    listenable,
    subscribed,
    with_subscription_id,
)
from mock_servers.http._wire import Exchange, SseItem, render_item

__all__ = ["Ending", "Plan", "Push", "SseStream", "StreamHub", "StreamKind"]

StreamKind = Literal["post", "listen", "get", "legacy"]
# How a streamed response ended, as recorded in `http_end` entries.
Ending = Literal["complete", "closed", "dropped", "client_closed", "shutdown"]


@dataclass
class Push:
    """Something for a long-lived stream: a message, raw data, a control, or a job."""

    message: dict[str, Any] | None = None
    raw: str | None = None
    control: Literal["close", "drop"] | None = None
    job: Callable[[], Coroutine[Any, Any, None]] | None = None
    violation: str | None = None  # the script's mark on `message`
    origin: str = ""  # where `message` comes from, for the send gate's errors
    listen_step: int | None = None  # only for the listen stream that this step answered


@dataclass
class Plan:
    """The scripted items of one SSE reply, and how far the wire has got through them."""

    items: list[SseItem]
    response: dict[str, Any] | None
    awaits: list[RequestId] = field(default_factory=list)
    cancel_of: RequestId | None = None  # the response waits for this request's cancellation
    delay_ms: int = 0
    fault: str | None = None  # hang, drop_connection or close_stream, at the response
    pos: int = 0
    answered: bool = False
    request_method: str | None = None  # what the response answers (for the send gate)
    violation: str | None = None  # the script's mark on the response
    origin: str = ""
    keep_open: bool = False  # sse.keep_open: the stream stays open after the response


class SseStream:
    """One logical event stream; `blocks` are the bytes written so far, for replay."""

    def __init__(
        self,
        stream_id: str,
        kind: StreamKind,
        session: str | None,
        request_id: RequestId | None,
        *,
        auto_ids: bool,
    ) -> None:
        self.id = stream_id
        self.kind = kind
        self.session = session
        self.request_id = request_id
        self.auto_ids = auto_ids
        self.notifications: Mapping[str, Any] = {}  # a listen stream's filter
        self.listen_step: int | None = None  # the step that answered its listen request
        self.plan: Plan | None = None
        self.blocks: list[tuple[str | None, bytes, dict[str, Any]]] = []
        self.exchange: Exchange | None = None  # the response carrying it now
        self.drop_partial = b""
        self.chunk_size: int | None = None  # kept for the responses that resume it
        self._counter = 0
        self._queue: deque[Push] = deque()
        self._wakeup: anyio.Event | None = None

    def next_id(self) -> str:
        self._counter += 1
        return f"{self.id}-{self._counter}"

    def enqueue(self, push: Push) -> None:
        self._queue.append(push)
        if self._wakeup is not None:
            self._wakeup.set()

    async def next_push(self) -> Push:
        while not self._queue:
            self._wakeup = anyio.Event()
            await self._wakeup.wait()
        return self._queue.popleft()


class StreamHub:
    """Every stream of one mock run, the pushes waiting for one, and the shutdown signal.

    `sessions` is the mock's own session table (shared): a GET or HTTP+SSE stream takes
    pushes only while its session is active, and an HTTP+SSE session ends with its stream.
    """

    def __init__(
        self,
        transcript: Transcript,
        engine: Engine,
        sessions: dict[str, str],
        *,
        auto_ids: bool,
        answer_timeout: float,
    ) -> None:
        self.transcript = transcript
        self.engine = engine
        self.sessions = sessions
        self.auto_ids = auto_ids
        self.answer_timeout = answer_timeout
        self.streams: dict[str, SseStream] = {}
        self.live: list[SseStream] = []  # streams waiting on pushes (or hanging)
        self._event_index: dict[str, tuple[str, int]] = {}
        self._pending: list[Push] = []  # pushes with no stream to carry them yet
        # 2026-07-28: listen requests the engine took whose streams are not open yet, and
        # the pushes held until they are (a send due right after a listen reaches that
        # listen too, after its acknowledgement, as on stdio).
        self._opening: set[int] = set()
        self._held: list[Push] = []
        self._closing_event: anyio.Event | None = None
        self._closed = False

    # -- shutdown and bounded waits ---------------------------------------------------------

    def closing(self) -> anyio.Event:
        # Created on first use, inside the loop that serves the app.
        if self._closing_event is None:
            self._closing_event = anyio.Event()
            if self._closed:
                self._closing_event.set()
        return self._closing_event

    def close(self) -> None:
        self._closed = True
        if self._closing_event is not None:
            self._closing_event.set()

    async def sleep(self, ms: float) -> None:
        """A scripted delay; cut short when the server closes."""
        if ms > 0:
            with anyio.move_on_after(ms / 1000):
                await self.closing().wait()

    async def until_closing(self, fn: Callable[[], Awaitable[None]], limit: float) -> bool:
        """Run fn() to its end (True), or until `limit` seconds pass or the server closes."""
        done = False
        with anyio.move_on_after(limit):
            async with anyio.create_task_group() as tg:

                async def closer() -> None:
                    await self.closing().wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(closer)
                await fn()
                done = True
                tg.cancel_scope.cancel()
        return done

    async def await_client(self, ids: list[RequestId], cancel_of: RequestId | None) -> None:
        """What a reply waits for, each bounded by the answer timeout: the client's
        notifications/cancelled of its request `cancel_of` (a reply held `after_cancel`),
        then its answers to the server requests `ids`."""
        if cancel_of is not None and not await self.until_closing(
            partial(self.engine.wait_for_cancel, cancel_of), self.answer_timeout
        ):
            self.note(
                f"no notifications/cancelled for request {cancel_of!r} within "
                f"{self.answer_timeout:g} s; continuing"
            )
        if not ids:
            return

        async def answers() -> None:
            for request_id in ids:
                await self.engine.wait_for_client_response(request_id)

        if not await self.until_closing(answers, self.answer_timeout):
            self.note(
                f"no answer to server request(s) {ids!r} within {self.answer_timeout:g} s; "
                "continuing"
            )

    def note(self, text: str) -> None:
        self.transcript.record("note", text=text)

    def record_sent(self, message: Any, channel: str) -> None:
        self.transcript.record("message", direction="server", message=message, channel=channel)

    # -- streams and pushes -----------------------------------------------------------------

    def new_stream(
        self, number: int, kind: StreamKind, session: str | None, request_id: RequestId | None
    ) -> SseStream:
        # Automatic ids encode the stream ("s7-3": the stream of request 7, third id) so
        # that they are unique and a resumption finds its stream.
        stream = SseStream(f"s{number}", kind, session, request_id, auto_ids=self.auto_ids)
        self.streams[stream.id] = stream
        return stream

    def find_event(self, event_id: str) -> tuple[SseStream, int] | None:
        found = self._event_index.get(event_id)
        return None if found is None else (self.streams[found[0]], found[1])

    def is_target(self, stream: SseStream) -> bool:
        if stream.kind == "listen":
            return True
        if stream.kind in ("get", "legacy"):
            return stream.session is None or self.sessions.get(stream.session) == "active"
        return False

    def listen_opening(self, number: int) -> None:
        """The engine took the listen request `number`: hold pushes until its stream opens."""
        self._opening.add(number)

    def listen_open(self, number: int) -> None:
        """The listen request `number` has its stream open (or never will): when no other
        listen is opening, the held pushes go out."""
        self._opening.discard(number)
        if not self._opening and self._held:
            held, self._held = self._held, []
            for push in held:
                self.push(push)

    def push(self, push: Push) -> None:
        """A server-initiated message: to the newest GET / HTTP+SSE stream, or at
        2026-07-28 to every listen stream that opted in to it (only the one its
        `listen_step` answered, if set; never the same message on two GET streams); kept
        until such a stream opens."""
        if self._opening and push.message is not None:
            self._held.append(push)
            return
        message = push.message
        if self.engine.stateless and message is not None and not listenable(message):
            self.note(
                f"server message {message.get('method', message.get('id'))!r} not sent: "
                "a 2026-07-28 listen stream carries change notifications only"
            )
            return
        targets = [
            s
            for s in self.live
            if self.is_target(s)
            and (message is None or s.kind != "listen" or subscribed(s.notifications, message))
            and (s.kind != "listen" or push.listen_step in (None, s.listen_step))
        ]
        if not targets:
            self._pending.append(push)
        elif self.engine.stateless:
            for stream in targets:
                stream.enqueue(push)
        else:
            targets[-1].enqueue(push)

    def control(self, control: Literal["close", "drop"], session: str | None = None) -> int:
        """End the long-lived streams (of one session); how many there were."""
        if session is None:
            streams = [s for s in self.live if s.kind != "post"]
        else:
            streams = [s for s in self.live if s.session == session and s.kind in ("get", "legacy")]
        for stream in streams:
            stream.enqueue(Push(control=control))
        return len(streams)

    # -- writing a stream -------------------------------------------------------------------

    async def run(
        self, ex: Exchange, stream: SseStream, *, replay_after: int | None = None
    ) -> None:
        """Write a started SSE response until its stream ends, watching for the client
        leaving and for shutdown; then finish (or break) the response and record how."""
        stream.exchange = ex
        if stream.chunk_size is not None:
            ex.chunk_size = stream.chunk_size
        result: Ending | None = None
        try:
            async with anyio.create_task_group() as tg:

                async def watch_client() -> None:
                    await ex.wait_disconnect()
                    tg.cancel_scope.cancel()

                async def watch_closing() -> None:
                    await self.closing().wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(watch_client)
                tg.start_soon(watch_closing)
                result = await self._play(ex, stream, replay_after, tg)
                tg.cancel_scope.cancel()
        finally:
            stream.exchange = None
            if stream in self.live:
                self.live.remove(stream)
        how: Ending = result or ("client_closed" if ex.disconnected else "shutdown")
        # Recorded before the end goes out, so that its time is never later than the moment
        # the client could see the end: a client's wait measured from it (http.retry-honoured)
        # is never made shorter than it was by a busy event loop.
        self.transcript.record("http_end", request=ex.number, stream=stream.id, how=how)
        if how == "dropped":
            await ex.abort(stream.drop_partial)  # in the handler's own task: see abort()
        elif how != "client_closed":
            await ex.end()
        if stream.kind == "legacy" and self.sessions.get(stream.session or "") == "active":
            self.sessions[stream.session or ""] = "closed"
        unanswered = stream.plan is not None and not stream.plan.answered
        if how == "client_closed" and stream.kind in ("post", "listen") and unanswered:
            # 2026-07-28: closing the response stream is how a client cancels (HM-5).
            self.note(
                f"request {ex.number}: the client closed stream {stream.id} before the response "
                f"(JSON-RPC id {stream.request_id!r}): a cancellation"
            )

    async def _play(
        self, ex: Exchange, stream: SseStream, replay_after: int | None, tg: TaskGroup
    ) -> Ending:
        if replay_after is not None:
            await self.replay(ex, stream, replay_after)
        if stream.plan is not None:
            played = await self._play_plan(ex, stream, stream.plan)
            if played in ("closed", "dropped"):
                return played
            if played == "done" and stream.kind in ("post", "listen") and not stream.plan.keep_open:
                return "complete"
        return await self._pump(ex, stream, tg)

    async def replay(self, ex: Exchange, stream: SseStream, after: int) -> None:
        """Write again what the stream carried after its block number `after`."""
        for _event_id, data, recorded in stream.blocks[after + 1 :]:
            await ex.write(data)
            self.transcript.record(
                "sse_event", request=ex.number, stream=stream.id, event=recorded, replay=True
            )

    async def _play_plan(
        self, ex: Exchange, stream: SseStream, plan: Plan
    ) -> Literal["done", "closed", "dropped", "hang"]:
        while plan.pos < len(plan.items):
            item = plan.items[plan.pos]
            if item.kind == "response":
                await ex.flush()  # nothing held back while waiting
                await self.await_client(plan.awaits, plan.cancel_of)
                plan.awaits, plan.cancel_of = [], None
                await self.sleep(plan.delay_ms)
                plan.delay_ms = 0
                if plan.fault == "hang":
                    return "hang"
                if plan.fault == "close_stream":
                    plan.fault = None  # a resumption delivers the response
                    return "closed"
                item.message = plan.response
                item.request_method = plan.request_method
                item.violation = plan.violation
                item.origin = f"{plan.origin}: the response"
                if plan.fault == "drop_connection":
                    rendered = render_item(item, None)
                    data = rendered[0] if rendered else b"data: "
                    stream.drop_partial = data[: max(1, len(data) // 2)]
                    return "dropped"
            if not await self.write_item(ex, stream, item):
                return "dropped"  # a mock error ends the response at once
            plan.pos += 1
            if item.kind == "response":
                plan.answered = True
            if item.close:
                return "closed"
        return "done"

    def admit_item(self, ex: Exchange, item: SseItem) -> bool:
        """The send gate for one SSE item: its message, or the JSON-RPC a raw item carries."""
        gate = self.engine.gate
        where = f"request {ex.number}: {item.origin or 'a server message'}"
        if item.message is not None and item.kind in ("message", "response"):
            return gate.admit(
                item.message,
                where=where,
                request_method=item.request_method,
                violation=item.violation,
            )
        if item.kind in ("raw", "data") and item.text is not None and item.violation is None:
            carried = jsonrpc_in_text(item.text)
            members = carried if isinstance(carried, list) else [carried]
            return all(gate.admit(m, where=where) for m in members if m is not None)
        return True

    async def write_item(self, ex: Exchange, stream: SseStream, item: SseItem) -> bool:
        """Write one item; False if the send gate refused it (nothing is written then)."""
        if stream.kind == "listen" and item.message is not None and stream.request_id is not None:
            item = replace(item, message=with_subscription_id(item.message, stream.request_id))
        if not self.admit_item(ex, item):
            self.note(self.engine.gate.describe())
            return False
        event_id = item.id if item.kind != "raw" else None
        if event_id is None and (
            item.kind == "prime" or (stream.auto_ids and item.kind in ("message", "response"))
        ):
            event_id = stream.next_id()
        try:
            rendered = render_item(item, event_id)
        except ValueError as exc:
            self.note(f"stream {stream.id}: an SSE item could not be written: {exc}")
            return True
        if rendered is None:
            return True
        data, recorded = rendered
        await ex.write(data)
        stream.blocks.append((event_id, data, recorded))
        if event_id is not None:
            self._event_index[event_id] = (stream.id, len(stream.blocks) - 1)
        self.transcript.record("sse_event", request=ex.number, stream=stream.id, event=recorded)
        if item.message is not None and item.kind in ("message", "response"):
            self.record_sent(item.message, ex.channel)
        return True

    async def _pump(self, ex: Exchange, stream: SseStream, tg: TaskGroup) -> Ending:
        """Wait on a stream: write what is pushed to it until a control ends it."""
        self.live.append(stream)
        if stream.kind == "listen":
            self.listen_open(ex.number)
        if self.is_target(stream) and self._pending:
            pending, self._pending = self._pending, []
            for push in pending:
                self.push(push)
        while True:
            await ex.flush()
            push = await stream.next_push()
            if push.control is not None:
                return "closed" if push.control == "close" else "dropped"
            if push.job is not None:
                tg.start_soon(push.job)
            elif push.raw is not None:  # a garbage fault: deliberate, never checked
                item = SseItem("data", text=push.raw, violation="garbage fault")
                await self.write_item(ex, stream, item)
            elif push.message is not None:
                item = SseItem(
                    "message", message=push.message, violation=push.violation, origin=push.origin
                )
                await self.write_item(ex, stream, item)
