"""2026-07-28 `subscriptions/listen`: what a listen request opts in to, and its id.

A listen request names the change notifications it wants (`params.notifications`, a
SubscriptionFilter); the server MUST NOT send it others, and marks each notification it
does send, and the result that ends the subscription, with the listen request's id in
`_meta` `io.modelcontextprotocol/subscriptionId`. Request-scoped notifications (progress,
log messages) and server requests never travel on a subscription.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.protocol import META_SUBSCRIPTION_ID, RequestId

__all__ = ["listenable", "subscribed", "with_subscription_id"]

# The change notifications a listen request opts in to by a flag of its filter.
_FLAGS = {
    "notifications/tools/list_changed": "toolsListChanged",
    "notifications/prompts/list_changed": "promptsListChanged",
    "notifications/resources/list_changed": "resourcesListChanged",
}
_UPDATED = "notifications/resources/updated"  # opted in to by resourceSubscriptions


def listenable(message: Mapping[str, Any]) -> bool:
    """Whether a server message is one a listen stream can carry: a change notification
    (request-scoped ones such as progress or log messages, and requests, never are)."""
    method = message.get("method")
    return "id" not in message and (method in _FLAGS or method == _UPDATED)


def subscribed(notifications: Mapping[str, Any], message: Mapping[str, Any]) -> bool:
    """Whether a listen filter (`params.notifications`) opted in to `message`."""
    method = message.get("method")
    flag = _FLAGS.get(method) if isinstance(method, str) else None
    if flag is not None:
        return notifications.get(flag) is True
    if method != _UPDATED:
        return False
    params = message.get("params")
    uri = params.get("uri") if isinstance(params, dict) else None
    uris = notifications.get("resourceSubscriptions")
    if not isinstance(uri, str) or not isinstance(uris, list):
        return False
    # The update may be for a sub-resource of the one subscribed to.
    return any(
        isinstance(u, str) and (uri == u or uri.startswith(u.rstrip("/") + "/")) for u in uris
    )


def with_subscription_id(message: dict[str, Any], subscription: RequestId) -> dict[str, Any]:
    """`message` as a listen stream carries it: a notification's `params._meta`, or a
    result's `_meta`, names the subscription (unless the script set the key itself)."""
    if "result" in message:
        member = "result"
    elif "method" in message and "id" not in message:
        member = "params"
    else:
        return message  # an error or a request: nothing to mark
    body = message.get(member, {})
    meta = body.get("_meta", {}) if isinstance(body, dict) else None
    if not isinstance(meta, dict) or META_SUBSCRIPTION_ID in meta:
        return message
    return {**message, member: {**body, "_meta": {**meta, META_SUBSCRIPTION_ID: subscription}}}
