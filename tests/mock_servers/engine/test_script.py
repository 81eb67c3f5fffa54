"""Script format v1: loading, one-line errors, conformance of scripted messages, patterns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from harness.strategies import json_values
from mock_servers._fixtures import fixtures_root
from mock_servers.engine._patterns import match, matches
from mock_servers.engine._script import ScriptError, load_script, parse_script

BASE: dict[str, Any] = {
    "format_version": 1,
    "name": "t",
    "revisions": ["2025-06-18"],
    "server": {"capabilities": {"tools": {}}},
    "steps": [
        {"expect": {"method": "tools/list"}, "reply": {"result": {"tools": []}}},
    ],
}


def _with(**changes: Any) -> dict[str, Any]:
    return {**json.loads(json.dumps(BASE)), **changes}


def _error(data: Any) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        parse_script(data, source="s.json")
    return info.value


def test_minimal_script_loads() -> None:
    script = parse_script(BASE, source="s.json")
    assert script.revisions == ("2025-06-18",)
    assert script.transports == ("stdio", "http")
    assert [s.kind for s in script.steps] == ["expect"]
    assert script.steps[0].label == "step 0 (expect tools/list)"


def test_legacy_revision_defaults_to_stdio_and_sse_legacy() -> None:
    script = parse_script(_with(revisions=["2024-11-05"]))
    assert script.transports == ("stdio", "sse-legacy")


def test_every_bundled_fixture_is_valid() -> None:
    files = sorted(fixtures_root().rglob("*.json"))
    assert files, "no fixture scripts are bundled"
    for file in files:
        load_script(file)


@pytest.mark.parametrize(
    ("data", "pointer", "reason", "fix"),
    [
        ([], "/", "a script is a JSON object", "start from"),
        (_with(format_version=2), "/format_version", "this version reads 1", '"format_version": 1'),
        (_with(revisions=["2099-01-01"]), "/revisions/0", "is not one of", "use one of"),
        (_with(colour="blue"), "/", "unknown member 'colour'", "allowed here"),
        (
            _with(steps=[{"expect": {}, "send": {"method": "x"}}]),
            "/steps/0",
            'exactly one of "expect", "send", "fault"',
            "split it",
        ),
        (
            _with(steps=[{"expect": {"method": "a"}, "reply": {"reslt": {}}}]),
            "/steps/0/reply",
            "unknown member 'reslt'",
            "correct its spelling",
        ),
        (
            _with(steps=[{"fault": {"kind": "explode"}}]),
            "/steps/0/fault/kind",
            "is not one of",
            '"hang"',
        ),
        (
            _with(
                steps=[
                    {
                        "expect": {"method": "a"},
                        "reply": {"result": {}, "error": {"code": 1, "message": "m"}},
                    }
                ]
            ),
            "/steps/0/reply",
            "result and error",
            "keep one",
        ),
        (
            _with(steps=[{"expect": {"method": {"$regexp": "a"}}}]),
            "/steps/0/expect/method/$regexp",
            "unknown pattern operator",
            "$regex",
        ),
        (
            _with(
                steps=[
                    {"label": "a", "expect": {"method": "x"}},
                    {"label": "a", "expect": {"method": "y"}},
                ]
            ),
            "/steps/1/label",
            "already used by step 0",
            "its own label",
        ),
        (
            _with(
                steps=[
                    {
                        "expect": {"method": "a"},
                        "reply": {"before": [{"id": {"$request": "/id", "as": "float"}}]},
                    }
                ]
            ),
            "/steps/0/reply/before/0/id/as",
            "is not one of",
            '"other_type"',
        ),
        (
            _with(revisions=["2024-11-05"], transports=["http"]),
            "/transports",
            "Streamable HTTP does not exist in 2024-11-05",
            "sse-legacy",
        ),
    ],
)
def test_invalid_script_gives_one_line(data: Any, pointer: str, reason: str, fix: str) -> None:
    error = _error(data)
    line = str(error)
    assert "\n" not in line
    assert line.startswith(f"s.json: {pointer}: ")
    assert reason in error.reason
    assert fix in error.fix


def test_scripted_result_must_conform_to_the_revision() -> None:
    data = _with(steps=[{"expect": {"method": "tools/list"}, "reply": {"result": {"tools": [{}]}}}])
    error = _error(data)
    assert error.pointer.startswith("/steps/0/reply/result/tools/0")
    assert "not a valid 2025-06-18 server message" in error.reason
    assert '"violation"' in error.fix


def test_deliberate_violation_is_exempt() -> None:
    data = _with(
        steps=[
            {
                "expect": {"method": "tools/list"},
                "reply": {"result": {"tools": [{}]}, "violation": "a tool without a name"},
            }
        ]
    )
    assert parse_script(data).steps[0].raw["reply"]["violation"] == "a tool without a name"


def test_sent_message_must_conform() -> None:
    data = _with(steps=[{"send": {"method": "notifications/progress", "params": {}}}])
    error = _error(data)
    assert error.pointer.startswith("/steps/0/send")


def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"format_version": 1,\n  "name": }', encoding="utf-8")
    error = _error_from_file(path)
    assert "line 2" in error.reason
    assert str(error).startswith(f"{path}: /: not valid JSON")


def test_missing_file(tmp_path: Path) -> None:
    assert _error_from_file(tmp_path / "nope.json").reason == "no such file"


def _error_from_file(path: Path) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        load_script(path)
    return info.value


def test_pick_revision() -> None:
    script = parse_script(_with(revisions=["2025-03-26", "2025-06-18"]))
    assert script.pick_revision(None) == "2025-06-18"
    assert script.pick_revision("2025-03-26") == "2025-03-26"
    with pytest.raises(ScriptError, match="does not declare revision 2025-11-25"):
        script.pick_revision("2025-11-25")


# -- patterns -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "value", "diff"),
    [
        ({"method": "a"}, {"method": "a", "id": 1}, []),
        ({"method": "a"}, {"method": "b"}, ['/method: expected "a", got "b"']),
        (
            {"params": {"name": "x"}},
            {},
            ['/params: expected {"name": "x"}, got nothing (member absent)'],
        ),
        ({"id": {"$present": True}}, {"id": 0}, []),
        ({"id": {"$absent": True}}, {"id": 0}, ["/id: expected absent, got 0"]),
        (
            {"id": {"$type": "integer"}},
            {"id": "1"},
            ['/id: expected a value of type integer, got string "1"'],
        ),
        ({"v": {"$type": "number"}}, {"v": 1}, []),
        ({"v": {"$regex": "^20"}}, {"v": "2025"}, []),
        ({"v": {"$any": [1, "1"]}}, {"v": "1"}, []),
        ({"p": {"$any": [{"$absent": True}, {"c": 1}]}}, {}, []),
        (
            {"p": {"$any": [{"$absent": True}, {"c": 1}]}},
            {"p": {"c": 2}},
            ['/p: expected any of [{"$absent": true}, {"c": 1}], got {"c": 2}'],
        ),
        ({"v": {"$contains": {"a": 1}}}, {"v": [{"a": 2}, {"a": 1, "b": 0}]}, []),
        ({"v": [1, 2]}, {"v": [1, 2, 3]}, ["/v: expected [1, 2], got [1, 2, 3]"]),
        ({"v": 1}, {"v": True}, ["/v: expected 1, got true"]),
        ({"v": 1}, {"v": 1.0}, []),
        ({"a/b": 1}, {"a/b": 2}, ["/a~1b: expected 1, got 2"]),
    ],
)
def test_pattern(pattern: Any, value: Any, diff: list[str]) -> None:
    assert [str(m) for m in match(pattern, value)] == diff
    assert matches(pattern, value) is (not diff)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([1.0, 2.5]),
    st.text("ab", max_size=2),
)


def _patterns(leaves: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Patterns with every operator, over small values (so that they often match)."""
    keys = st.sampled_from(["a", "b", "c"])

    def nest(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(keys, inner, max_size=3),
            st.builds(lambda p: {"$any": p}, st.lists(inner, max_size=3)),
            st.builds(lambda p: {"$contains": p}, inner),
        )

    operators = st.one_of(
        st.builds(lambda b: {"$present": b}, st.booleans()),
        st.builds(lambda b: {"$absent": b}, st.booleans()),
        st.builds(
            lambda t: {"$type": t},
            st.sampled_from(["string", "integer", "number", "boolean", "object", "array", "null"]),
        ),
        st.builds(lambda r: {"$regex": r}, st.sampled_from(["^a", "b$", "ab"])),
    )
    return st.recursive(st.one_of(leaves, operators), nest, max_leaves=8)


def _values() -> st.SearchStrategy[Any]:
    keys = st.sampled_from(["a", "b", "c"])
    return st.recursive(
        _SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=3)
        ),
        max_leaves=8,
    )


@given(_patterns(_SCALARS), _values())
def test_the_fast_predicate_agrees_with_the_diff(pattern: Any, value: Any) -> None:
    # The mocks pick steps with `matches` and explain misses with `match`: they must agree.
    note(f"pattern: {pattern!r}; value: {value!r}")
    assert matches(pattern, value) is (not match(pattern, value))
    assert matches({"v": pattern}, {}) is (not match({"v": pattern}, {}))


@given(json_values())
def test_a_value_matches_itself_as_a_pattern(value: Any) -> None:
    note(f"value: {value!r}")
    if not _has_dollar_keys(value):
        assert match(value, value) == []


def _has_dollar_keys(value: Any) -> bool:
    if isinstance(value, dict):
        return any(k.startswith("$") for k in value) or any(map(_has_dollar_keys, value.values()))
    if isinstance(value, list):
        return any(map(_has_dollar_keys, value))
    return False


def _listen_script(send_listen: str, revisions: tuple[str, ...] = ("2026-07-28",)) -> Any:
    ack = {"method": "notifications/subscriptions/acknowledged", "params": {"notifications": {}}}
    return _with(
        revisions=list(revisions),
        server={"capabilities": {"tools": {"listChanged": True}}},
        steps=[
            {
                "label": "list",
                "expect": {"method": "tools/list"},
                "reply": {"result": {"tools": []}},
            },
            {
                "label": "A",
                "expect": {"method": "subscriptions/listen"},
                "reply": {"before": [ack], "fault": {"kind": "hang"}},
            },
            {"send": {"method": "notifications/tools/list_changed"}, "listen": send_listen},
        ],
    )


def test_a_send_step_names_the_listen_it_goes_on() -> None:
    script = parse_script(_listen_script("A"), source="s.json")
    assert script.listen_step(script.steps[2]) == 1
    assert script.listen_step(script.steps[1]) is None  # a step without `listen`


@pytest.mark.parametrize(
    ("listen", "revisions", "reason"),
    [
        ("B", ("2026-07-28",), "no step before this one has the label 'B'"),
        ("list", ("2026-07-28",), "step 0 (list) does not expect subscriptions/listen"),
        ("A", ("2025-11-25",), "subscriptions/listen exists from 2026-07-28 on"),
    ],
)
def test_a_send_step_must_name_an_earlier_listen(
    listen: str, revisions: tuple[str, ...], reason: str
) -> None:
    error = _error(_listen_script(listen, revisions))
    assert reason in str(error)
    assert "/steps/2/listen" in str(error)


@pytest.mark.parametrize(
    ("member", "label"),
    [("after", "nowhere"), ("until", "poll"), ("after", "tell")],
)
def test_after_and_until_name_another_expect_step(member: str, label: str) -> None:
    # An unknown label, the step itself, a send step: each is one problem at its pointer.
    error = _error(
        _with(
            server={"capabilities": {"tools": {}}},
            steps=[
                {"label": "tell", "send": {"method": "notifications/tools/list_changed"}},
                {
                    "label": "poll",
                    "expect": {"method": "tools/list"},
                    "reply": {"result": {"tools": []}},
                    member: label,
                },
            ],
        )
    )
    assert f"/steps/1/{member}" in str(error)
    assert f"no other expect step has the label {label!r}" in str(error)
    assert "name the label of another expect step" in str(error)
