"""The layers: the import-linter contracts (pyproject.toml, `lint-imports` in the lint step)
cover every package, and no package imports another's `_`-private module (which import-linter's
wildcards cannot say, so it is checked here, from the source)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("harness", "mock_servers")


def _contracts() -> dict[str, dict[str, list[str]]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["name"]: c for c in config["tool"]["importlinter"]["contracts"]}


def _module_of(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _product_files() -> list[Path]:
    return sorted(p for top in PRODUCT for p in (ROOT / top).rglob("*.py"))


def _public_children(package: str) -> set[str]:
    """The public sub-packages and modules directly inside `package`."""
    folder = ROOT.joinpath(*package.split("."))
    children = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
    children |= {p.parent.name for p in folder.glob("*/__init__.py")}
    return {f"{package}.{c}" for c in children if not c.startswith("_")}


def _layer_members(contract: dict[str, list[str]]) -> set[str]:
    members = {m.strip() for layer in contract["layers"] for m in layer.split("|")}
    containers = contract.get("containers", [])
    return {f"{c}.{m}" for c in containers for m in members} if containers else members


def test_the_harness_layers_name_every_part_of_the_harness() -> None:
    layered = _layer_members(
        _contracts()["the harness's layers, from the commands down to the protocol"]
    )
    missing = sorted(_public_children("harness") - layered)
    assert missing == [], f"add {missing} to the harness's layers in pyproject.toml"


def test_the_mock_server_layers_name_every_part_of_mock_servers() -> None:
    contract = _contracts()[
        "the mock servers' transports build on the engine, and neither on the other"
    ]
    subpackages = {p.parent.name for p in (ROOT / "mock_servers").glob("*/__init__.py")}
    missing = sorted({f"mock_servers.{s}" for s in subpackages} - _layer_members(contract))
    assert missing == [], f"add {missing} to the mock servers' layers in pyproject.toml"


@pytest.mark.parametrize(
    "contract",
    [
        "mock_servers never imports the harness (its runner, checks, clients, plugin)",
        "nothing imports pytest outside the plugin",
    ],
)
def test_the_forbidden_contracts_cover_every_part_of_the_harness(contract: str) -> None:
    listed = set(_contracts()[contract].get("forbidden_modules", [])) | set(
        _contracts()[contract].get("source_modules", [])
    )
    # The protocol layer is what mock_servers may import; the plugin is what may import pytest.
    allowed = {
        "mock_servers never imports the harness (its runner, checks, clients, plugin)": {
            "harness.protocol"
        },
        "nothing imports pytest outside the plugin": {"harness.pytest_plugin"},
    }[contract]
    missing = sorted(_public_children("harness") - listed - allowed)
    assert missing == [], f"add {missing} to the contract {contract!r} in pyproject.toml"


def _private_owner(module: str) -> str | None:
    """The package whose private module `module` is (`a.b._c.d` -> `a.b`), or None."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_"):
            return ".".join(parts[:i])
    return None


def _private_imports_across_packages(path: Path, root: Path = ROOT) -> list[str]:
    importer = _module_of(path, root)
    package = importer if path.name == "__init__.py" else importer.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            owner = _private_owner(name)
            if owner is None or not owner.startswith(PRODUCT):
                continue
            if package == owner or package.startswith(owner + "."):
                continue  # a package's own private modules, its sub-packages' included
            found.append(f"{importer}:{node.lineno} imports {name}")
            break  # one finding per import statement
    return found


def test_no_package_imports_another_packages_private_module() -> None:
    found = [hit for path in _product_files() for hit in _private_imports_across_packages(path)]
    assert found == [], "import these from the package's public face (its __init__): " + "; ".join(
        found
    )


def test_the_private_import_rule_catches_a_reach_into_another_package(tmp_path: Path) -> None:
    # The rule's violation branch, on planted modules laid out as the tree is.
    line = "from harness.judging._verdicts import Status\n"
    for folder in ("harness/suite", "harness/judging/inner"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "_planted.py").write_text(line, encoding="utf-8")
    found = _private_imports_across_packages(tmp_path / "harness/suite/_planted.py", tmp_path)
    assert found == ["harness.suite._planted:1 imports harness.judging._verdicts"]
    # A package's own private modules, from its sub-packages too, are its own business.
    inner = tmp_path / "harness/judging/inner/_planted.py"
    assert _private_imports_across_packages(inner, tmp_path) == []


def test_no_package_folder_holds_more_than_about_ten_modules() -> None:
    # The folders show the parts (docs/architecture.md); a folder past this has grown a part
    # of its own that wants a sub-package.
    crowded = {
        str(folder.relative_to(ROOT)): n
        for top in PRODUCT
        for folder in [ROOT / top, *(p.parent for p in (ROOT / top).rglob("*/__init__.py"))]
        if (n := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > 11
    }
    assert crowded == {}


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
