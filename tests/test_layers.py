"""The import-layer contracts (pyproject.toml, run by `lint-imports` in the lint step) name
private modules one by one, since import-linter's wildcards replace whole names only. This
keeps those lists complete: a new private module is covered, or this test says where to add it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[1]


def _contracts() -> dict[str, dict[str, list[str]]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["name"]: c for c in config["tool"]["importlinter"]["contracts"]}


def _private_modules(package: str) -> set[str]:
    folder = ROOT.joinpath(*package.split("."))
    return {f"{package}.{p.stem}" for p in folder.glob("_*.py") if p.stem != "__init__"}


@pytest.mark.parametrize(
    ("contract", "package"),
    [
        ("the protocol layer is at the bottom", "harness"),
        ("mock_servers never imports the harness (its runner, checks, clients, plugin)", "harness"),
        ("mock_servers uses the protocol layer through its public face", "harness.protocol"),
        ("the harness uses mock_servers through its public modules", "mock_servers"),
        ("nothing imports pytest outside the plugin", "harness"),
    ],
)
def test_contract_names_every_private_module(contract: str, package: str) -> None:
    listed = set(_contracts()[contract].get("forbidden_modules", [])) | set(
        _contracts()[contract].get("source_modules", [])
    )
    missing = sorted(_private_modules(package) - listed)
    assert missing == [], f"add {missing} to the contract {contract!r} in pyproject.toml"


def test_the_data_file_normaliser_needs_no_dependency() -> None:
    # tox's fixtures env installs nothing and runs the normaliser as a file; `-S` hides
    # site-packages, so an import of jsonschema (or of the package) would fail here first.
    done = subprocess.run(
        [sys.executable, "-I", "-S", "mock_servers/_jsonfiles.py", "fixtures"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "0 not normalised" in done.stdout
