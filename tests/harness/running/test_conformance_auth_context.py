"""The context of an authorization scenario names the mock's own authorization server.

The runner's `auth/pre-registration` hands the client its authorization server's URL in
MCP_CONFORMANCE_CONTEXT; the mock's is known only once it listens, so the served
scenario's context says `AUTHORIZATION_SERVER` and the run fills it in.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from harness.official import conformance_target, served_scenario
from harness.running import AUTHORIZATION_SERVER, CONTEXT_VARIABLE, run_conformance_client


def test_the_issuer_in_the_context_is_the_mocks_authorization_server() -> None:
    scenario = served_scenario("auth/pre-registration")
    assert scenario is not None
    assert scenario.context is not None
    assert scenario.context["issuer"] == AUTHORIZATION_SERVER
    # printenv prints the context, then fails on the URL appended as its last argument.
    run = run_conformance_client(
        f"printenv {CONTEXT_VARIABLE}", conformance_target(scenario, "2025-11-25")
    )
    assert run.harness_error is None
    context = json.loads(run.stdout.splitlines()[0])
    assert list(context) == ["name", "client_id", "client_secret", "issuer"]
    assert context["name"] == "auth/pre-registration"
    assert context["client_id"] == "pre-registered-client"
    assert context["issuer"].startswith("http://")
    assert context["issuer"] != AUTHORIZATION_SERVER
    assert json.loads(run.variables[CONTEXT_VARIABLE]) == context
    # The authorization server listens on a port of its own, not the MCP server's.
    assert urlsplit(context["issuer"]).port not in (None, urlsplit(run.url).port)
