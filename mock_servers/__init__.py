"""Scriptable MCP mock servers (stdio and Streamable HTTP), usable without pytest."""

from __future__ import annotations

from mock_servers._fixtures import fixtures_root

__all__ = ["fixtures_root"]
