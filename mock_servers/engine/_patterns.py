"""Partial matching of JSON values against script patterns, with readable differences.

A pattern is a JSON value. An object pattern matches an object that has every listed
member (matching recursively); members it does not list are ignored, so scripts stay
short and tolerate clients that send more than the spec needs. An object made only of
`$` keys is an operator:

    {"$present": true}    the member exists (any value)
    {"$absent": true}     the member does not exist
    {"$type": "string"}   JSON type: string, integer, number, boolean, object, array, null
    {"$regex": "^v\\d"}   a string that the regular expression matches (re.search)
    {"$any": [p, q]}      any of the patterns matches
    {"$contains": p}      an array with at least one element matching p

Arrays match element by element and must have the same length; scalars match by JSON
equality (1 and 1.0 are equal, 1 and true are not, as in JSON).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NoReturn

from harness.protocol import json_type

__all__ = ["OPERATORS", "Mismatch", "is_operator", "match", "matches"]

OPERATORS = frozenset({"$present", "$absent", "$type", "$regex", "$any", "$contains"})
_MISSING: Any = object()


@dataclass(frozen=True)
class Mismatch:
    pointer: str
    expected: str
    actual: str

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: expected {self.expected}, got {self.actual}"


def is_operator(pattern: Any) -> bool:
    return isinstance(pattern, dict) and bool(pattern) and all(k.startswith("$") for k in pattern)


def _show(value: Any) -> str:
    if value is _MISSING:
        return "nothing (member absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


@lru_cache(maxsize=256)
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


_NUMBERS = ("integer", "number")


def _same_scalar(pattern: Any, value: Any) -> bool:
    wanted, got = json_type(pattern), json_type(value)
    if wanted in _NUMBERS and got in _NUMBERS:
        return bool(pattern == value)
    return wanted == got and bool(pattern == value)


def matches(pattern: Any, value: Any) -> bool:
    """Whether `value` matches `pattern`: `not match(pattern, value)`, without the diff.

    The mocks try every pending step against every message; on that path a mismatch's
    text (a JSON dump per member) is wasted work, so this stops at the first difference.
    """
    if type(pattern) is str:  # the commonest leaf (a method name): as `_same_scalar` says
        return type(value) is str and pattern == value
    if is_operator(pattern):
        return _operator_holds(pattern, value)
    if value is _MISSING:
        return False
    if isinstance(pattern, dict):
        if not isinstance(value, dict):
            return False
        return all(matches(sub, value.get(key, _MISSING)) for key, sub in pattern.items())
    if isinstance(pattern, list):
        if not isinstance(value, list) or len(value) != len(pattern):
            return False
        return all(matches(sub, item) for sub, item in zip(pattern, value, strict=True))
    return _same_scalar(pattern, value)


def _operator_holds(pattern: dict[str, Any], value: Any) -> bool:
    for op, arg in pattern.items():
        if op == "$present":
            holds = (value is _MISSING) != bool(arg)
        elif op == "$absent":
            holds = (value is _MISSING) == bool(arg)
        elif op == "$any":
            holds = any(matches(p, value) for p in arg)
        elif value is _MISSING:  # as in `match`: every other operator needs a value
            holds = False
        elif op == "$type":
            actual = json_type(value)
            holds = actual == arg or (arg == "number" and actual == "integer")
        elif op == "$regex":
            holds = isinstance(value, str) and bool(_compiled(arg).search(value))
        elif op == "$contains":
            holds = isinstance(value, list) and any(matches(arg, item) for item in value)
        else:
            _unknown_operator(op)
        if not holds:
            return False
    return True


def _unknown_operator(op: str) -> NoReturn:
    raise ValueError(f"unknown pattern operator {op!r}; known: {', '.join(sorted(OPERATORS))}")


def match(pattern: Any, value: Any, pointer: str = "") -> list[Mismatch]:
    """Every difference between `value` and `pattern` (empty: it matches)."""
    if is_operator(pattern):
        return _match_operator(pattern, value, pointer)
    if value is _MISSING:
        return [Mismatch(pointer, _show(pattern), _show(value))]
    if isinstance(pattern, dict):
        if not isinstance(value, dict):
            return [Mismatch(pointer, "an object", _show(value))]
        found: list[Mismatch] = []
        for key, sub in pattern.items():
            found += match(sub, value.get(key, _MISSING), f"{pointer}/{_escape(key)}")
        return found
    if isinstance(pattern, list):
        if not isinstance(value, list) or len(value) != len(pattern):
            return [Mismatch(pointer, _show(pattern), _show(value))]
        found = []
        for index, (sub, item) in enumerate(zip(pattern, value, strict=True)):
            found += match(sub, item, f"{pointer}/{index}")
        return found
    return [] if _same_scalar(pattern, value) else [Mismatch(pointer, _show(pattern), _show(value))]


def _match_operator(pattern: dict[str, Any], value: Any, pointer: str) -> list[Mismatch]:
    found: list[Mismatch] = []
    for op, arg in pattern.items():
        if op == "$present":
            if (value is _MISSING) == bool(arg):
                found.append(Mismatch(pointer, "present" if arg else "absent", _show(value)))
        elif op == "$absent":
            if (value is _MISSING) != bool(arg):
                found.append(Mismatch(pointer, "absent" if arg else "present", _show(value)))
        elif op == "$any":  # before the absence test: {"$any": [{"$absent": true}, ...]}
            if all(match(p, value, pointer) for p in arg):
                found.append(Mismatch(pointer, f"any of {_show(arg)}", _show(value)))
        elif value is _MISSING:
            found.append(Mismatch(pointer, f"{op} {_show(arg)}", _show(value)))
        elif op == "$type":
            actual = json_type(value)
            if actual != arg and not (arg == "number" and actual == "integer"):
                found.append(
                    Mismatch(pointer, f"a value of type {arg}", f"{actual} {_show(value)}")
                )
        elif op == "$regex":
            if not isinstance(value, str) or not _compiled(arg).search(value):
                found.append(Mismatch(pointer, f"a string matching /{arg}/", _show(value)))
        elif op == "$contains":
            if not isinstance(value, list) or all(match(arg, item, pointer) for item in value):
                found.append(Mismatch(pointer, f"an array containing {_show(arg)}", _show(value)))
        else:
            _unknown_operator(op)
    return found
