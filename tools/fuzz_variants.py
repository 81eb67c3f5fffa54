"""Variants of the reference client with a defect that no scripted scenario provokes, for
the fuzzer (harness.fuzzing, docs/fuzzing.md) to find.

Each variant breaks one property of the fuzzer on inputs no bundled script sends: the
suite's scenarios judge it as they judge the reference client
(tests/harness/fuzzing/test_variants.py checks that at 2025-11-25 over stdio), and the
fuzzer finds it, shrinks the failure and saves a script that replays it (the same test).
Like tools/variant_clients.py, each is small and reaches into the reference client's
private parts: a probe of the fuzzer, not an example of a client.
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Mapping
from typing import Any

from harness.clients import ClientError, ReferenceClient
from harness.protocol import ErrorResponse, Response

__all__ = [
    "EXPECTED",
    "VARIANTS",
    "BigIntegersAsFloats",
    "BlobContentsSniffedAsText",
    "EmptyCursorEndsTheList",
    "IdReusedAfterAnApplicationError",
    "ImageToolErrorsAsSuccess",
    "Int64ServerRequestIds",
    "JsonLookingGarbageEndsTheSession",
    "PromptListingsSkipEmptyPages",
    "WholeFloatsAsIntegersInToolMeta",
]

_SAFE = 2**53


def _floated(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) > _SAFE:
        return float(value)
    if isinstance(value, list):
        return [_floated(v) for v in value]
    if isinstance(value, dict):
        return {k: _floated(v) for k, v in value.items()}
    return value


def _whole_as_int(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_whole_as_int(v) for v in value]
    if isinstance(value, dict):
        return {k: _whole_as_int(v) for k, v in value.items()}
    return value


class BigIntegersAsFloats(ReferenceClient):
    """Surfaces an integer of structuredContent beyond 2**53 as a float, as a decoder that
    reads every number as a double does (9007199254740993 becomes 9007199254740992.0)."""

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        result = await super().call_tool(name, arguments, timeout=timeout, progress=progress)
        if "structuredContent" in result:
            result = {**result, "structuredContent": _floated(result["structuredContent"])}
        return result


class EmptyCursorEndsTheList(ReferenceClient):
    """Takes an empty nextCursor for "no more pages", and so drops the pages after it."""

    async def _list_all(self, method: str, key: str) -> list[Any]:
        items: list[Any] = []
        cursor: Any = None
        for _ in range(100):
            page = await self._request(method, None if cursor is None else {"cursor": cursor})
            items.extend(page.get(key, []))
            cursor = page.get("nextCursor")
            if not cursor:
                break
        return items


class ImageToolErrorsAsSuccess(ReferenceClient):
    """Drops isError from a tool result that holds an image: a failed chart tool's error
    image is shown to the model as if the tool had worked."""

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        result = await super().call_tool(name, arguments, timeout=timeout, progress=progress)
        images = [b for b in result.get("content", []) if b.get("type") == "image"]
        if result.get("isError") is True and images:
            result = {k: v for k, v in result.items() if k != "isError"}
        return result


class WholeFloatsAsIntegersInToolMeta(ReferenceClient):
    """Surfaces a whole float in a tool's `_meta` as an integer (2.0 becomes 2), as a
    JSON library that normalises numbers does."""

    async def list_tools(self) -> dict[str, Any]:
        listed = await super().list_tools()
        tools = [
            {**tool, "_meta": _whole_as_int(tool["_meta"])} if "_meta" in tool else tool
            for tool in listed["tools"]
        ]
        return {**listed, "tools": tools}


class IdReusedAfterAnApplicationError(ReferenceClient):
    """After a JSON-RPC error with an application-defined (positive) code, sends its next
    request under the id of the request that failed, as if that id were free again."""

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: bool = False,
    ) -> dict[str, Any]:
        try:
            return await super().call_tool(name, arguments, timeout=timeout, progress=progress)
        except ClientError as exc:
            if exc.kind == "protocol" and exc.code is not None and exc.code > 0:
                unused = next(self._ids)
                self._ids = itertools.count(unused - 1)  # the failed request's id, again
            raise


def _int64(value: int) -> int:
    """`value` as a signed 64-bit integer holds it: wrapped around."""
    return (value + 2**63) % 2**64 - 2**63


class Int64ServerRequestIds(ReferenceClient):
    """Answers a server request under its id as a signed 64-bit integer holds it: an id
    beyond 2**63 wraps around (2**63 becomes -2**63). The suite's 2**53 + 1 fits."""

    def _answer_soon(self, reply: Response | ErrorResponse) -> None:
        if isinstance(reply.id, int) and not isinstance(reply.id, bool):
            wrapped = _int64(reply.id)
            if isinstance(reply, Response):
                reply = Response(wrapped, reply.result)
            else:
                reply = ErrorResponse(wrapped, reply.error)
        super()._answer_soon(reply)


class BlobContentsSniffedAsText(ReferenceClient):
    """Surfaces a resource's blob whose bytes are valid UTF-8 as text, as a reader that
    sniffs content instead of believing the server's `blob` does."""

    async def read_resource(self, uri: str) -> dict[str, Any]:
        result = await super().read_resource(uri)
        contents = []
        for item in result.get("contents", []):
            if isinstance(item, dict) and isinstance(item.get("blob"), str):
                try:
                    text = base64.b64decode(item["blob"]).decode("utf-8")
                except ValueError:
                    pass
                else:
                    item = {**{k: v for k, v in item.items() if k != "blob"}, "text": text}
            contents.append(item)
        return {**result, "contents": contents}


class JsonLookingGarbageEndsTheSession(ReferenceClient):
    """Takes a line from the server that looks like JSON ("{...") but does not parse for
    a broken stream: every later request fails at once with a transport error. The suite's
    garbage line ("garbage, not JSON") does not look like JSON, and is skipped."""

    _saw_json_looking_garbage = False

    def _deliver(self, data: bytes | str) -> None:
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        if text.lstrip().startswith(("{", "[")):
            try:
                json.loads(text)
            except ValueError:
                self._saw_json_looking_garbage = True
                # The requests in flight fail too (an answer may already be on its way).
                for request_id in list(self._pending):
                    self._fail(request_id, ClientError("transport", "the stream is broken"))
        super()._deliver(data)

    async def _request(
        self, method: str, params: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        if self._saw_json_looking_garbage:
            raise ClientError("transport", f"{method}: the stream from the server is broken")
        return await super()._request(method, params, **kwargs)


class PromptListingsSkipEmptyPages(ReferenceClient):
    """Lists prompts until a page comes back empty, as if an empty page were the end
    (whatever its nextCursor says): the prompts of later pages are lost."""

    async def _list_all(self, method: str, key: str) -> list[Any]:
        if method != "prompts/list":
            return await super()._list_all(method, key)
        items: list[Any] = []
        cursor: Any = None
        for _ in range(100):
            page = await self._request(method, None if cursor is None else {"cursor": cursor})
            batch = page.get(key, [])
            items.extend(batch)
            cursor = page.get("nextCursor")
            if cursor is None or not batch:
                break
        return items


VARIANTS: tuple[type[ReferenceClient], ...] = (
    BigIntegersAsFloats,
    EmptyCursorEndsTheList,
    ImageToolErrorsAsSuccess,
    WholeFloatsAsIntegersInToolMeta,
    IdReusedAfterAnApplicationError,
    Int64ServerRequestIds,
    BlobContentsSniffedAsText,
    PromptListingsSkipEmptyPages,
    JsonLookingGarbageEndsTheSession,
)

EXPECTED: dict[str, str] = {
    "BigIntegersAsFloats": "surfaced-as-sent",
    "EmptyCursorEndsTheList": "surfaced-as-sent",
    "ImageToolErrorsAsSuccess": "errors-told-apart",
    "WholeFloatsAsIntegersInToolMeta": "surfaced-as-sent",
    "IdReusedAfterAnApplicationError": "ids-unique",
    "Int64ServerRequestIds": "server-requests-answered",
    "BlobContentsSniffedAsText": "surfaced-as-sent",
    "PromptListingsSkipEmptyPages": "surfaced-as-sent",
    "JsonLookingGarbageEndsTheSession": "survives-faults",
}
"""Variant name -> the property the fuzzer finds it breaks."""
