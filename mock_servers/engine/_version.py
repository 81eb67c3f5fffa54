"""The installed version of mcp-testbench."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version

__all__ = ["package_version"]


@cache
def package_version() -> str:
    try:
        return version("mcp-testbench")
    except PackageNotFoundError:  # a source tree that is not installed
        return "0+unknown"
