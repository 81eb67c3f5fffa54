"""The revisions of the MCP specification that the harness knows, and their eras."""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "HANDSHAKE_REVISIONS",
    "LATEST",
    "META_SUBSCRIPTION_ID",
    "REVISIONS",
    "STATELESS_REVISIONS",
    "Revision",
    "batches_allowed",
    "check_revision",
    "is_stateless",
    "transports_for",
]

Revision = Literal["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]

#: Every released revision, oldest first.
REVISIONS: Final[tuple[Revision, ...]] = (
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
)
#: Revisions with the initialize/initialized handshake and sessions.
HANDSHAKE_REVISIONS: Final[tuple[Revision, ...]] = REVISIONS[:4]
#: Revisions without a handshake: every request carries its own `_meta`.
STATELESS_REVISIONS: Final[tuple[Revision, ...]] = REVISIONS[4:]
LATEST: Final[Revision] = REVISIONS[-1]
#: 2026-07-28: the `_meta` key that names the subscription (the id of its
#: `subscriptions/listen` request) on every message of a listen stream.
META_SUBSCRIPTION_ID: Final = "io.modelcontextprotocol/subscriptionId"


def check_revision(value: str) -> Revision:
    """`value` as a Revision, or a ValueError naming the known ones."""
    for revision in REVISIONS:
        if value == revision:
            return revision
    raise ValueError(f"unknown MCP revision {value!r}; known revisions: {', '.join(REVISIONS)}")


def is_stateless(revision: str) -> bool:
    return revision in STATELESS_REVISIONS


def transports_for(revision: str) -> tuple[str, ...]:
    """The transports a revision defines: HTTP+SSE in 2024-11-05, Streamable HTTP after."""
    return ("stdio", "sse-legacy") if revision == "2024-11-05" else ("stdio", "http")


def batches_allowed(revision: str) -> bool:
    """Only 2025-03-26 admits JSON-RPC batches (added there, removed in 2025-06-18)."""
    return revision == "2025-03-26"
