"""The client contract as users get it: everything a client author needs is public in
`harness.clients`, docs/clients.md documents all of it, and the docs' example client works
(driven against a stdio mock, and through `pytest --mcp-client` from its own folder)."""

from __future__ import annotations

import inspect
import json
import os
import re
import subprocess
import sys
import typing
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest
from _machine import within

import harness.clients
from harness.clients import (
    FEATURES,
    OPERATIONS,
    ClientError,
    ClientEvent,
    ConnectOptions,
    ErrorKind,
    McpClient,
    McpClientExtras,
    StdioTarget,
)
from harness.clients import _contract as contract
from mock_servers import fixtures_root

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "clients.md"
WAIT = within(10.0)


def _doc() -> str:
    return DOC.read_text(encoding="utf-8")


def _example_source() -> str:
    [code] = re.findall(r"```python\n(.*?)```", _doc(), flags=re.DOTALL)
    return code


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """The docs' example, saved as tiny.py and imported as its reader would."""
    (tmp_path / "tiny.py").write_text(_example_source(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import tiny as module

    yield module
    sys.modules.pop("tiny", None)


def test_every_name_of_the_contract_is_public() -> None:
    missing = [name for name in contract.__all__ if name not in harness.clients.__all__]
    assert missing == [], f"export {missing} from harness.clients"
    for name in contract.__all__:
        assert getattr(harness.clients, name) is getattr(contract, name)


def _protocol_methods(protocol: type) -> list[str]:
    return sorted(
        name
        for name, member in vars(protocol).items()
        if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, property))
    )


def test_the_docs_name_every_method_kind_feature_operation_and_option() -> None:
    text = _doc()
    names = [
        *_protocol_methods(McpClient),
        *_protocol_methods(McpClientExtras),
        *typing.get_args(ErrorKind),
        *FEATURES,
        *OPERATIONS,
        *(f.name for f in fields(ConnectOptions)),
        *(f.name for f in fields(ClientEvent)),
        *(name for name in contract.__all__),
    ]
    assert len(names) > 60
    undocumented = sorted({name for name in names if f"`{name}" not in text})
    assert undocumented == [], f"docs/clients.md does not name {undocumented}"
    # Every kind of the Literal is in the errors table, and the harness's own two apart.
    kinds = re.findall(r"^\| `(\w+)` \| ", text.split("## Errors", 1)[1], flags=re.MULTILINE)
    assert kinds[:6] == [k for k in typing.get_args(ErrorKind) if k not in ("hang", "crash")]


def test_the_readme_sends_python_users_to_the_docs_not_to_a_private_module() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "_contract" not in readme
    assert "[docs/clients.md](docs/clients.md)" in readme


def test_the_docs_example_is_a_client_that_works(tiny: ModuleType) -> None:
    client = tiny.TinyClient()
    assert isinstance(client, McpClient)
    assert client.supports <= FEATURES | OPERATIONS | {"2025-06-18", "2025-11-25"}
    assert tiny.TinyClient.concurrent_instances is True
    script = fixtures_root() / "stdio" / "list-and-call.json"
    target = StdioTarget(
        (sys.executable, "-m", "mock_servers.stdio", str(script), "--revision", "2025-11-25")
    )
    events: list[ClientEvent] = []

    async def drive() -> list[Any]:
        options = ConnectOptions(timeout=WAIT, on_event=events.append)
        try:
            with anyio.fail_after(WAIT * 2):
                return [
                    await client.connect(target, options),
                    await client.list_tools(),
                    await client.call_tool("add", {"a": 1, "b": 2}),
                    await client.ping(),
                ]
        finally:
            with anyio.fail_after(WAIT):
                await client.close()

    connected, listed, called, pinged = anyio.run(drive)
    assert connected == {
        "protocolVersion": "2025-11-25",
        "serverInfo": {"name": "stdio-mock", "version": "1.0.0"},
    }
    assert [tool["name"] for tool in listed["tools"]] == ["add"]
    assert called == {"content": [{"type": "text", "text": "3"}], "isError": False}
    assert pinged == {}
    assert client._process.returncode is not None  # close() ended the server it spawned


def test_the_docs_example_refuses_locally_what_the_server_did_not_declare(
    tiny: ModuleType,
) -> None:
    client = tiny.TinyClient()
    script = fixtures_root() / "lifecycle" / "no-tools-capability.json"
    target = StdioTarget(
        (sys.executable, "-m", "mock_servers.stdio", str(script), "--revision", "2025-11-25")
    )

    async def drive() -> ClientError:
        try:
            with anyio.fail_after(WAIT * 2):
                await client.connect(target, ConnectOptions(timeout=WAIT))
                with pytest.raises(ClientError) as info:
                    await client.list_tools()
                return info.value
        finally:
            with anyio.fail_after(WAIT):
                await client.close()

    error = anyio.run(drive)
    assert (error.kind, error.message) == ("unsupported", "the server did not declare tools")


def test_the_docs_command_runs_the_example_from_its_folder(tmp_path: Path) -> None:
    # `pytest --mcp-client=tiny:TinyClient` as the page says: the console script (whose
    # sys.path starts at its own folder, not here), no PYTHONPATH, one scenario.
    (tmp_path / "tiny.py").write_text(_example_source(), encoding="utf-8")
    report = tmp_path / "r.json"
    console = Path(sys.executable).with_name("pytest")
    command = [str(console)] if console.is_file() else [sys.executable, "-m", "pytest"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [
            *command,
            "-p",
            "no:cacheprovider",
            "--mcp-client=tiny:TinyClient",
            f"--mcp-report={report}",
            "mcp-testbench::tools-call-2025-11-25-stdio",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT * 6,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(report.read_text(encoding="utf-8"))["results"]
    assert results
    assert {r["status"] for r in results} == {"PASS"}
    assert {r["client"] for r in results} == {"tiny 0.1.0"}
