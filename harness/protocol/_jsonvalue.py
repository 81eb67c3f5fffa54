"""Comparing JSON values as JSON, with their types: 5, 5.0, "5" and true all differ.

Python's `==` says `1 == 1.0 == True`, so a client that turns every integer into a double,
or an id into a boolean, would compare equal. Integers compare exactly at any size (the
codec reads them as Python ints), so a value beyond 2**53 that lost precision differs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["json_type", "same_json"]


def json_type(value: Any) -> str:
    """The JSON type of a decoded value: null, boolean, integer, number, string, array, object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values: the same type at every level, and the same value."""
    kind = json_type(a)
    if kind != json_type(b):
        return False
    if kind == "array":
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    if kind == "object":
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    return bool(a == b)
