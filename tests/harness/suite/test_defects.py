"""One defect that is several checks' root cause: a request of the server left unanswered
(harness/judging/_judge.py names it on the items it blocks, and the reports tell it as one
line). An answer under a mangled id is the id rule's defect, never this one."""

from __future__ import annotations

from _mutation import run_case
from _planted import NeverAnswersServerRequests

from harness.clients import ReferenceClient
from harness.judging import CATALOGUE, Status, Verdict, judge
from harness.judging._judge import _causes
from harness.protocol import ErrorResponse, Response


class AnswersUnderAnotherId(ReferenceClient):
    """RPC-1: answers every request of the server, under an id it never used."""

    async def _reply(self, reply: Response | ErrorResponse) -> None:
        if isinstance(reply, Response):
            reply = Response(f"not-{reply.id}", reply.result)
        await super()._reply(reply)


def _verdicts(client: type[ReferenceClient], run: tuple[str, str, str]) -> dict[str, Verdict]:
    result = run_case(client, run)
    return {
        check_id: judge(CATALOGUE[check_id], result)
        for check_id in result.scenario.checks
        if CATALOGUE[check_id].applies(result.revision, result.transport)
    }


def test_a_request_left_unanswered_names_the_defect_on_what_it_blocks() -> None:
    seen = _verdicts(NeverAnswersServerRequests, ("features-server-ids", "2025-11-25", "http"))
    blocked = [v for v in seen.values() if v.status is Status.BLOCKED]
    assert blocked, seen
    for verdict in blocked:
        assert verdict.root == "jsonrpc.answer-ids-exact", verdict
        defect = verdict.defect
        assert defect is not None, verdict
        assert (defect.kind, defect.about) == ("unanswered-server-requests", "ping")
        assert defect.then.startswith("call_tool failed: "), defect


def test_an_answer_under_a_mangled_id_is_no_request_left_unanswered() -> None:
    """The call hangs all the same (the mock waits for an answer under its id): the hang
    is charged to the id rule, and no "never answered" defect is named."""
    result = run_case(AnswersUnderAnotherId, ("features-server-ids", "2025-11-25", "http"))
    assert judge(CATALOGUE["jsonrpc.answer-ids-exact"], result).status is Status.FAIL
    _, failed = _causes(result)
    assert failed is not None
    assert (failed.id, failed.symptom) == ("jsonrpc.answer-ids-exact", "client.call_tool")
    assert failed.defect is None, failed
    # The same run, the request left unanswered instead: the defect is named.
    result = run_case(NeverAnswersServerRequests, ("features-server-ids", "2025-11-25", "http"))
    _, failed = _causes(result)
    assert failed is not None
    assert failed.defect is not None, failed
    assert failed.defect.kind == "unanswered-server-requests"
