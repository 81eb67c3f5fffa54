"""The transport-independent core of every mock server.

`_script` the fixture format and its checks, `_patterns` the partial-match patterns, `_engine`
the replay of a script for one session, `_send_gate` the schema check on every message a mock
sends, `_transcript` the record of the wire, `_negotiation` the revision a dev server answers,
`_subscriptions` the 2026-07-28 listen streams, `_auth_settings` a script's `auth` section.
The transports (`mock_servers.stdio`, `mock_servers.http`) build on this and on nothing of
each other.
"""

from __future__ import annotations

from mock_servers.engine._auth_settings import AuthSettings, PreRegisteredClient
from mock_servers.engine._engine import (
    META_PROTOCOL_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
    Action,
    Delivery,
    Engine,
    HttpInfo,
    Outcome,
)
from mock_servers.engine._negotiation import (
    Choice,
    SessionTranscript,
    choose_revision,
    first_message,
    served_revisions,
)
from mock_servers.engine._patterns import matches
from mock_servers.engine._script import (
    Script,
    ScriptError,
    complete_stateless_result,
    load_script,
    parse_script,
)
from mock_servers.engine._send_gate import (
    MOCK_ERROR_EXIT,
    jsonrpc_in_text,
    minimal_result,
    split_mark,
)
from mock_servers.engine._subscriptions import listenable, subscribed, with_subscription_id
from mock_servers.engine._transcript import NOTIFY_SUFFIX, Transcript, read_transcript
from mock_servers.engine._version import package_version

__all__ = [
    "META_PROTOCOL_VERSION",
    "MOCK_ERROR_EXIT",
    "NOTIFY_SUFFIX",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "Action",
    "AuthSettings",
    "Choice",
    "Delivery",
    "Engine",
    "HttpInfo",
    "Outcome",
    "PreRegisteredClient",
    "Script",
    "ScriptError",
    "SessionTranscript",
    "Transcript",
    "choose_revision",
    "complete_stateless_result",
    "first_message",
    "jsonrpc_in_text",
    "listenable",
    "load_script",
    "matches",
    "minimal_result",
    "package_version",
    "parse_script",
    "read_transcript",
    "served_revisions",
    "split_mark",
    "subscribed",
    "with_subscription_id",
]
