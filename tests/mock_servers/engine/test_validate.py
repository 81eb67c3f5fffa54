"""Tests for `mcp-testbench validate` and the checks behind it (mock_servers.engine._script).

A script is checked in three passes (format, meaning, conformance of what the mock sends);
every problem of a pass is reported, each as one line naming where, what and the fix.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from mock_servers import ScriptError, load_script, parse_script

CALL = {"expect": {"method": "tools/call"}, "reply": {"result": {"content": []}}}


def script(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format_version": 1,
        "name": "v",
        "revisions": ["2025-11-25"],
        "server": {"capabilities": {"tools": {}}},
        "steps": [CALL],
    }
    data.update(changes)
    return data


def problems(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    with pytest.raises(ScriptError) as info:
        parse_script(data, source="s.json")
    return [(p.pointer, p.reason, p.fix) for p in info.value.problems]


def test_every_format_problem_is_reported_not_only_the_first() -> None:
    data = script(
        colour="blue",
        steps=[
            {"fault": {"kind": "explode"}},
            CALL,
            {"expect": {"method": "a"}, "reply": {"reslt": {}}},
        ],
    )
    found = problems(data)
    assert [(pointer, reason.split(" is not")[0]) for pointer, reason, _ in found] == [
        ("/steps/0/fault/kind", "'explode'"),
        ("/steps/2/reply", "unknown member 'reslt'"),
        ("", "unknown member 'colour'"),
    ]


def test_the_error_is_one_line_that_counts_the_others() -> None:
    data = script(steps=[{"fault": {"kind": "explode"}}, {"fault": {"kind": "boom"}}])
    with pytest.raises(ScriptError) as info:
        parse_script(data, source="s.json")
    line = str(info.value)
    assert "\n" not in line
    assert line.startswith("s.json: /steps/0/fault/kind: ")
    assert line.endswith("(and 1 more problem: mcp-testbench validate lists all)")
    assert info.value.pointer == "/steps/0/fault/kind"  # the first problem's, as before
    assert len(info.value.lines()) == 2


def test_meaning_and_conformance_problems_are_reported_together() -> None:
    data = script(
        steps=[
            {"label": "a", "expect": {"method": "x"}},
            {
                "label": "a",
                "expect": {"method": "tools/list"},
                "reply": {"result": {"tools": [{}]}},
            },
        ]
    )
    found = problems(data)
    assert found[0][:2] == ("/steps/1/label", "the label 'a' is already used by step 0")
    assert found[1][0].startswith("/steps/1/reply/result/tools/0")
    assert "not a valid 2025-11-25 server message" in found[1][1]


@pytest.mark.parametrize(
    ("changes", "pointer", "fix"),
    [
        ({"revisons": ["2025-11-25"]}, "", "correct its spelling to 'revisions'"),
        (
            {"steps": [{"expect": {"method": "a"}, "replly": {}}]},
            "/steps/0",
            "correct its spelling to 'reply'",
        ),
        ({"server": {"capabilites": {}}}, "/server", "correct its spelling to 'capabilities'"),
    ],
)
def test_an_unknown_key_names_the_closest_known_one(
    changes: dict[str, Any], pointer: str, fix: str
) -> None:
    data = script(**changes)
    if "revisons" in changes:
        del data["revisions"]
    found = [p for p in problems(data) if p[1].startswith("unknown member")]
    assert found[0][0] == pointer
    assert found[0][2].startswith(fix)
    assert "allowed here" in found[0][2]


def test_an_unknown_key_in_a_step_is_named_not_split() -> None:
    found = problems(script(steps=[{"expcet": {"method": "tools/list"}, "label": "l"}]))
    assert found == [
        ("/steps/0", "unknown member 'expcet' in a step", "correct its spelling to 'expect'")
    ]
    found = problems(script(steps=[{"label": "only"}]))
    assert found[0][1] == 'a step needs one of "expect", "send" or "fault"; it has \'label\''
    assert "split" not in found[0][2]


def test_typos_inside_expect_patterns_are_caught() -> None:
    data = script(
        steps=[
            {"expect": {"methdo": "tools/list"}},
            {"expect": {"method": "tools/call", "params": {"name": {"$regx": "^a"}}}},
            {"expect": {"method": {"$any": [{"$tpye": "string"}]}}},
        ]
    )
    found = problems(data)
    assert found[0][0] == "/steps/0/expect/methdo"
    assert "not a member of a JSON-RPC message" in found[0][1]
    assert found[0][2].startswith("correct its spelling to 'method'")
    assert found[1][:2] == (
        "/steps/1/expect/params/name/$regx",
        "unknown pattern operator $regx",
    )
    assert found[1][2].startswith("correct its spelling to $regex")
    assert found[2][0] == "/steps/2/expect/method/$any/0/$tpye"
    assert found[2][2].startswith("correct its spelling to $type")


@pytest.mark.parametrize(
    ("changes", "pointer", "reason"),
    [
        (
            {"transports": ["stdio"], "steps": [CALL, {"fault": {"kind": "expire_session"}}]},
            "/steps/1/fault/kind",
            "expire_session has nothing to expire: the script runs over stdio only",
        ),
        (
            {
                "revisions": ["2026-07-28"],
                "steps": [
                    {
                        "expect": {"method": "tools/list"},
                        "reply": {"fault": {"kind": "expire_session"}},
                    }
                ],
            },
            "/steps/0/reply/fault/kind",
            "expire_session has nothing to expire: 2026-07-28 has no sessions",
        ),
        (
            {"http": {"sessions": False}, "steps": [{"fault": {"kind": "expire_session"}}]},
            "/steps/0/fault/kind",
            'expire_session has nothing to expire: the script turns sessions off ("http": '
            '{"sessions": false})',
        ),
        (
            {"transports": ["stdio"], "http": {"reply_as": "sse"}},
            "/http",
            "the http settings applies over HTTP only, and the script runs over stdio",
        ),
        (
            {"transports": ["stdio"], "steps": [{**CALL, "http": {"method": "POST"}}]},
            "/steps/0/http",
            "an http match applies over HTTP only",
        ),
        (
            {"transports": ["stdio"], "steps": [{**CALL, "reply": {"status": 500, "body": "x"}}]},
            "/steps/0/reply/status",
            "reply 'status' applies over HTTP only",
        ),
        (
            {"transports": ["http"], "stdio": {"on_eof": "ignore"}},
            "/stdio",
            "the stdio settings apply over stdio only",
        ),
        (
            {"transports": ["http"], "steps": [CALL, {"fault": {"kind": "crash"}}]},
            "/steps/1/fault/kind",
            "crash is a stdio fault, and the script runs over http",
        ),
        (
            {"revisions": ["2026-07-28"], "http": {"get": "405"}},
            "/http/get",
            "http.get has no effect at 2026-07-28",
        ),
        (
            {"http": {"legacy_post": "404"}},
            "/http/legacy_post",
            "http.legacy_post is how an HTTP+SSE server refuses a POST",
        ),
        (
            {"revisions": ["2026-07-28"], "server": {"protocol_version": "2025-06-18"}},
            "/server/protocol_version",
            "server.protocol_version answers initialize",
        ),
        (
            {"server": {"supported_versions": ["2025-11-25"]}},
            "/server/supported_versions",
            "server.supported_versions is for 2026-07-28",
        ),
    ],
)
def test_settings_that_cannot_apply_are_refused(
    changes: dict[str, Any], pointer: str, reason: str
) -> None:
    found = problems(script(**changes))
    assert (found[0][0], found[0][1][: len(reason)]) == (pointer, reason), found


def test_expire_session_is_accepted_where_a_revision_has_sessions() -> None:
    data = script(
        revisions=["2025-11-25", "2026-07-28"], steps=[{"fault": {"kind": "expire_session"}}]
    )
    assert parse_script(data).steps[0].kind == "fault"


def test_validate_prints_every_problem_of_every_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(script(colour=1, steps=[{"expcet": {}}, {"fault": {"kind": "x"}}])))
    good = tmp_path / "good.json"
    good.write_text(json.dumps(script()))
    assert main(["validate", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    invalid = [line for line in out if line.startswith("invalid: ")]
    assert [line.split(": ")[2] for line in invalid] == ["/steps/0", "/steps/1/fault/kind", "/"]
    assert all(line.startswith(f"invalid: {bad}: ") for line in invalid)
    assert out[-1] == "2 scripts checked, 1 invalid (3 problems)"
    assert load_script(good).name == "v"


# -- templated messages: what the send gate would refuse at the first answer ----------------------

ECHO = {"$request": "/params/arguments/text"}


def echo_step(reply: dict[str, Any]) -> dict[str, Any]:
    return {"expect": {"method": "tools/call", "params": {"name": "echo"}}, "reply": reply}


def test_a_templated_content_item_of_an_unknown_type_is_refused_by_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The script: `validate` passed it, and the send gate refused its first answer.
    path = tmp_path / "echo.json"
    result = {"content": [{"type": "txt", "text": ECHO}]}
    path.write_text(json.dumps(script(steps=[echo_step({"result": result})])), encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    [line, total] = capsys.readouterr().out.splitlines()
    assert line == (
        f"invalid: {path}: /steps/0/reply/result/content/0/type: step 0 (expect tools/call): "
        'not a valid 2025-11-25 server message (whatever its $request values): must be "text", '
        'not "txt"; fix: correct it, or mark that message with "violation": "<why>" if it '
        "breaks the spec on purpose (docs/scripts.md: a per-message mark)"
    )
    assert total == "1 scripts checked, 1 invalid"


@pytest.mark.parametrize("text", ["hello", "", "日本語"])
def test_the_send_gate_refuses_that_answer_whatever_the_request_holds(text: str) -> None:
    # What validate now refuses is what the gate would: the filled answer, for any text.
    from mock_servers.engine import Transcript
    from mock_servers.engine._send_gate import SendGate

    gate = SendGate("2025-11-25", Transcript(script="t"))
    filled = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "txt", "text": text}]}}
    assert gate.problem(filled, request_method="tools/call") == (
        "/result/content/0/type",
        'must be "text", not "txt"',
    )


@pytest.mark.parametrize(
    ("reply", "pointer", "reason"),
    [
        (  # a templated before message: its fixed part is the script's
            {
                "before": [
                    {
                        "method": "notifications/progress",
                        "params": {"progressToken": {"$request": "/params/_meta/progressToken"}},
                    }
                ],
                "result": {"content": []},
            },
            "/steps/0/reply/before/0/params",
            'missing required member "progress"',
        ),
        (  # image data from the request, with no mimeType beside it
            {"result": {"content": [{"type": "image", "data": ECHO}]}},
            "/steps/0/reply/result/content/0",
            'missing required member "mimeType"',
        ),
        (  # "as": "other_type" is a template too; the content beside it is not
            {
                "result": {
                    "content": [{"type": "text"}],
                    "_meta": {"echoed-id": {"$request": "/id", "as": "other_type"}},
                }
            },
            "/steps/0/reply/result/content/0",
            'missing required member "text"',
        ),
    ],
)
def test_the_fixed_parts_of_a_templated_message_are_checked(
    reply: dict[str, Any], pointer: str, reason: str
) -> None:
    [(found_pointer, found_reason, _)] = problems(script(steps=[echo_step(reply)]))
    assert found_pointer == pointer
    assert found_reason.startswith("step 0 (expect tools/call): not a valid 2025-11-25")
    assert found_reason.endswith(reason)


@pytest.mark.parametrize(
    "result",
    [
        {"content": [{"type": "text", "text": ECHO}]},  # a string there
        {"content": [{"$request": "/params/arguments/item"}]},  # a whole content item
        {"content": [], "isError": {"$request": "/params/arguments/flag"}},  # a boolean
        {"content": [], "structuredContent": {"n": ECHO}},  # anything at all
    ],
)
def test_a_template_where_some_request_value_fits_is_accepted(result: dict[str, Any]) -> None:
    assert parse_script(script(steps=[echo_step({"result": result})])).steps[0].kind == "expect"


def test_a_template_in_an_enum_is_left_to_the_request() -> None:
    # No stand-in is "user" or "assistant": the request may be, so the role is not judged.
    messages = [
        {"role": {"$request": "/params/arguments/role"}, "content": {"type": "text", "text": "hi"}}
    ]
    step = {"expect": {"method": "prompts/get"}, "reply": {"result": {"messages": messages}}}
    data = script(steps=[step], server={"capabilities": {"prompts": {}}})
    assert parse_script(data).steps[0].kind == "expect"
    messages[0]["content"] = {"type": "txt", "text": "hi"}
    [(pointer, reason, _)] = problems(data)
    assert pointer == "/steps/0/reply/result/messages/0/content/type"
    assert reason.endswith('must be "text", not "txt"')


def test_an_sse_item_is_sent_as_written_so_its_template_is_not_filled() -> None:
    # The engine fills results, errors and before messages only; an SSE item's `$request`
    # goes out as the object it is, which the schema refuses.
    item = {
        "message": {
            "method": "notifications/message",
            "params": {"level": "info", "data": 1, "logger": ECHO},
        }
    }
    reply = {"as": "sse", "sse": {"events": [item]}, "result": {"content": []}}
    data = script(steps=[echo_step(reply)])
    [(pointer, reason, _)] = problems(data)
    assert pointer == "/steps/0/reply/sse/events/0/message/params/logger"
    assert "must be a string, not an object" in reason
