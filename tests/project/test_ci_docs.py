"""docs/ci.md: every `run:` and `script:` command of its workflows, run for real.

Each workflow runs in a scratch folder laid out like a user's repository: `src/mypkg/
testing.py` (the bundled reference client as `make_client`), `requirements.txt`,
`mcp-testbench/` (the submodule the page has the user add: this checkout), and for
the driver jobs `conformance/` with the TypeScript example's package files (so `npm ci`
installs for real, from npm's cache when it can) while the driver run is the Python example
driver (`MCP_DRIVER`, and the driver command of the baseline line). The project is installed
already: pip commands run as `--dry-run --no-index`, which proves the packages they name
resolve without changing the environment. A source tree cannot be built offline (its build
backend comes from the index), so `pip install ./mcp-testbench` is checked to name this
project's tree and resolved as the installed mcp-testbench. The hosted parts (`uses:`
actions, images, the submodule checkout) are not run; what they upload must exist after
the run.

PYTEST_ADDOPTS narrows each suite run to one scenario, so that the commands are run as
written and a workflow takes seconds.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml  # a test dependency (the `test` extra): the product reads no YAML

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ci.md"
NARROW = "--mcp-revision=2025-11-25 --mcp-transport=stdio -k tools-call"
PYTHON_DRIVER = f"{sys.executable} {ROOT / 'examples' / 'drivers' / 'python' / 'driver.py'}"

BAD_CALL = """
from harness.clients import ReferenceClient

class BadCall(ReferenceClient):
    '''Sends a progress token that is a fraction on tools/call: fails jsonrpc.messages-valid.'''
    async def _request(self, method, params=None, **kw):
        if method == "tools/call":
            params = {**(params or {}), "_meta": {"progressToken": 0.5}}
        return await super()._request(method, params, **kw)
"""


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _workflows() -> dict[str, Any]:
    """Each YAML block by its heading pair, e.g. "GitHub Actions / A Python client"."""
    text = DOC.read_text(encoding="utf-8")
    found = {}
    for match in re.finditer(r"```yaml\n(.*?)```", text, re.S):
        before = text[: match.start()]
        platform = re.findall(r"^## (.+)$", before, re.M)[-1]
        kind = re.findall(r"^### (.+)$", before, re.M)[-1]
        found[f"{platform} / {kind}"] = yaml.safe_load(match.group(1))
    return found


WORKFLOWS = _workflows()


def _job(doc: Any) -> tuple[dict[str, str], list[str], list[str], list[str]]:
    """(env, commands, uploaded paths, JUnit files) of a GitHub or GitLab job."""
    if "jobs" in doc:  # GitHub Actions
        (job,) = doc["jobs"].values()
        commands = [step["run"] for step in job["steps"] if "run" in step]
        uploads = [
            step["with"]["path"]
            for step in job["steps"]
            if str(step.get("uses", "")).startswith("actions/upload-artifact")
        ]
        return dict(job.get("env", {})), commands, uploads, []
    (job,) = doc.values()
    artifacts = job["artifacts"]
    return (
        dict(job.get("variables", {})),
        list(job["script"]),
        list(artifacts["paths"]),
        [artifacts["reports"]["junit"]],
    )


def _pip_offline(command: str, repo: Path) -> str:
    """`command` with pip offline, and a local path to mcp-testbench's tree (the clone)
    checked and replaced by the installed project it is."""

    def the_clone(match: re.Match[str]) -> str:
        pyproject = repo / match.group(1) / "pyproject.toml"
        assert re.search(r'^name = "mcp-testbench"$', pyproject.read_text("utf-8"), re.M)
        return "mcp-testbench"

    command = re.sub(r"(?<=\s)(\./[\w.-]+)(?=\s|$)", the_clone, command)
    return re.sub(r"\bpip install\b", "pip install --dry-run --no-index", command)


def _repo(tmp_path: Path, driver: bool) -> Path:
    repo = tmp_path / "repo"
    (repo / "src" / "mypkg").mkdir(parents=True)
    (repo / "src" / "mypkg" / "__init__.py").write_text("", encoding="utf-8")
    (repo / "src" / "mypkg" / "testing.py").write_text(
        "from harness.clients import ReferenceClient as make_client\n", encoding="utf-8"
    )
    (repo / "src" / "broken.py").write_text(BAD_CALL, encoding="utf-8")
    (repo / "requirements.txt").write_text("anyio\n", encoding="utf-8")
    (repo / "mcp-testbench").symlink_to(ROOT, target_is_directory=True)  # the submodule
    if driver:
        (repo / "conformance").mkdir()
        template = ROOT / "examples" / "drivers" / "typescript-sdk"
        for name in ("package.json", "package-lock.json", "driver.mjs"):
            shutil.copy(template / name, repo / "conformance" / name)
    return repo


def _env(repo: Path, job_env: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env.update({k: str(v) for k, v in job_env.items()})
    # The job's PYTHONPATH first, then this checkout's sources (shadowing the installed copy).
    env["PYTHONPATH"] = os.pathsep.join(p for p in (job_env.get("PYTHONPATH"), str(ROOT)) if p)
    env["PATH"] = os.pathsep.join((str(Path(sys.executable).parent), env.get("PATH", "")))
    env["PYTEST_ADDOPTS"] = NARROW
    env["GITHUB_STEP_SUMMARY"] = str(repo.parent / "step-summary.md")
    env["npm_config_prefer_offline"] = "true"
    if "MCP_DRIVER" in job_env:
        env["MCP_DRIVER"] = PYTHON_DRIVER
    return env


def _sh(command: str, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-eo", "pipefail", "-c", _pip_offline(command, repo)],
        cwd=repo, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip


def test_the_page_has_the_four_jobs() -> None:
    assert set(WORKFLOWS) == {
        "GitHub Actions / A Python client",
        "GitHub Actions / A TypeScript client, through its driver",
        "GitLab CI / A Python client",
        "GitLab CI / A TypeScript client, through its driver",
    }
    for doc in WORKFLOWS.values():
        env, commands, uploads, _ = _job(doc)
        assert any("--baseline mcp-baseline.json" in c for c in commands)
        assert uploads == ["reports/"]
        assert ("MCP_CLIENT" in env) != ("MCP_DRIVER" in env)


INSTALL = "python -m pip install ./mcp-testbench"


@pytest.mark.parametrize("name", sorted(WORKFLOWS))
def test_each_job_installs_mcp_testbench_from_the_clone_it_checks_out(name: str) -> None:
    """The issue: the jobs installed mcp-testbench from the package index, where it is not
    published. Each installs the submodule its checkout brings, and nothing by that name
    from an index."""
    doc = WORKFLOWS[name]
    env, commands, _, _ = _job(doc)
    (install,) = [c for c in commands if "pip install" in c]
    assert install == INSTALL or install.startswith(INSTALL + " ")
    assert "mcp-testbench" not in install.removeprefix(INSTALL)
    if "jobs" in doc:  # GitHub Actions: the checkout brings the submodule
        (job,) = doc["jobs"].values()
        checkout = next(
            s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout")
        )
        assert checkout.get("with", {}).get("submodules") is True
    else:
        assert env["GIT_SUBMODULE_STRATEGY"] in ("normal", "recursive")


def test_the_readme_and_the_page_say_how_to_install_from_the_repository() -> None:
    page = DOC.read_text(encoding="utf-8")
    assert "git submodule add <the URL you clone mcp-testbench from> mcp-testbench" in page
    assert f"{INSTALL}   # on your machine too" in page
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "not published on a package index" in readme
    assert "pip install ./mcp-testbench" in readme


@pytest.mark.parametrize("name", sorted(WORKFLOWS))
def test_every_command_of_the_workflow_runs(name: str, tmp_path: Path) -> None:
    env_of_job, commands, uploads, junit = _job(WORKFLOWS[name])
    driver = "MCP_DRIVER" in env_of_job
    if driver and shutil.which("npm") is None:
        pytest.skip("needs npm for the driver job's `npm ci`")
    repo = _repo(tmp_path, driver)
    env = _env(repo, env_of_job)

    # Once, as the page says: mcp-testbench installed from the submodule on the user's
    # machine, and the baseline written (the same client underneath).
    lines = [line for block in _blocks("sh") for line in block.splitlines()]
    (install,) = [line for line in lines if line.startswith(INSTALL)]
    done = _sh(install, repo, env)
    assert done.returncode == 0, done.stdout + done.stderr
    (setup,) = [
        line.replace('"node conformance/driver.mjs"', f'"{PYTHON_DRIVER}"')
        for line in lines
        if line.startswith("mcp-testbench baseline write") and ("--driver" in line) == driver
    ]
    done = _sh(setup, repo, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "expected failures" in done.stdout

    for command in commands:
        done = _sh(command, repo, env)
        assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    for path in [*uploads, *junit]:
        assert (repo / path).exists(), path
    assert "tools-call-2025-11-25-stdio::jsonrpc.messages-valid" in (
        repo / "reports" / "junit.xml"
    ).read_text(encoding="utf-8")
    if "GitHub" in name:
        summary = Path(env["GITHUB_STEP_SUMMARY"]).read_text(encoding="utf-8")
        assert summary.startswith("# MCP client conformance")

    if not driver:
        # The gate: a new failure fails the job, and its reports are still written.
        for report in (repo / "reports").iterdir():
            report.unlink()
        (gate,) = [c for c in commands if "--baseline" in c]
        done = _sh(gate, repo, {**env, "MCP_CLIENT": "broken:BadCall"})
        assert done.returncode == 1, done.stdout + done.stderr
        assert "FAIL jsonrpc.messages-valid" in done.stdout
        assert (repo / "reports" / "mcp.html").exists()
