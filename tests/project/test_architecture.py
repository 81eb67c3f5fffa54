"""docs/architecture.md matches the tree: every module and package it names exists, and every
package of the tree is on its map."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("harness", "mock_servers")


def _tree_block() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("## The parts", 1)[1].split("```", 2)[1]
    return block.splitlines()


def _tree_modules() -> dict[str, set[str]]:
    """Package folder -> the private module names its lines in the map mention."""
    named: dict[str, set[str]] = {}
    stack: list[tuple[int, str]] = []
    current = ""
    for line in _tree_block():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        # A line belongs to the innermost folder above it that is indented less.
        stack = [(i, name) for i, name in stack if i < indent]
        folder = re.match(r"^\s*([a-z_]+)/\s", line + " ")
        if folder:
            stack.append((indent, folder.group(1)))
        current = "/".join(name for _, name in stack)
        named.setdefault(current, set())
        named[current] |= set(re.findall(r"(?<![\w.`/-])(_[a-z][a-z_]*)(?:\.py)?\b", line))
    return named


def test_every_module_in_the_map_exists() -> None:
    missing = [
        f"{folder}/{name}.py"
        for folder, names in _tree_modules().items()
        for name in sorted(names)
        if not (ROOT / folder / f"{name}.py").is_file()
    ]
    assert missing == [], f"docs/architecture.md names modules that do not exist: {missing}"


def test_every_package_of_the_tree_is_on_the_map() -> None:
    mapped = set(_tree_modules())
    packages = {
        str(init.parent.relative_to(ROOT))
        for top in PACKAGES
        for init in (ROOT / top).rglob("__init__.py")
        if "fixtures" not in init.parts and "schemas" not in init.parts
    }
    assert sorted(packages - mapped) == []


def test_every_private_module_of_the_tree_is_on_the_map() -> None:
    named = _tree_modules()
    unmapped = [
        str(p.relative_to(ROOT))
        for top in PACKAGES
        for p in sorted((ROOT / top).rglob("_*.py"))
        if p.name not in ("__init__.py", "__main__.py")
        and p.stem not in named.get(str(p.parent.relative_to(ROOT)), set())
    ]
    assert unmapped == [], f"put these on the map in docs/architecture.md: {unmapped}"


def test_every_path_and_module_the_page_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:harness|mock_servers|tests)/[\w/.]*)`", text))
    missing = [p for p in sorted(paths) if not (ROOT / p.rstrip("/")).exists()]
    for dotted in sorted(set(re.findall(r"`((?:harness|mock_servers)(?:\.\w+)+)`", text))):
        base = ROOT.joinpath(*dotted.split("."))
        if not (base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()):
            missing.append(dotted)
    for spaced in re.findall(r"`tests/\{([\w,]+)\}/`", text):
        missing += [f"tests/{d}" for d in spaced.split(",") if not (ROOT / "tests" / d).is_dir()]
    for prefix, group in re.findall(r"`(tests/[\w/]+/)\{([\w,]+)\}/`", text):
        missing += [f"{prefix}{d}" for d in group.split(",") if not (ROOT / prefix / d).is_dir()]
    assert missing == [], f"docs/architecture.md names what does not exist: {missing}"


def test_the_map_check_sees_a_module_that_is_gone() -> None:
    # The violation branch: a name on the map with no file behind it is reported.
    named = _tree_modules()
    assert "_scenario" in named["harness/running"]
    assert not (ROOT / "harness/running/_no_such_module.py").exists()
    named["harness/running"].add("_no_such_module")
    missing = [
        f"{folder}/{name}.py"
        for folder, names in named.items()
        for name in names
        if not (ROOT / folder / f"{name}.py").is_file()
    ]
    assert missing == ["harness/running/_no_such_module.py"]
