"""Where the bundled fixture scripts are, in a source checkout and in an installed copy."""

from __future__ import annotations

from pathlib import Path

__all__ = ["fixtures_root"]


def fixtures_root() -> Path:
    """The folder of bundled scripts.

    The wheel ships `fixtures/` inside this package (see pyproject.toml); a source
    checkout (editable install, or tests run from the repository) has it at the top.
    """
    here = Path(__file__).resolve().parent
    for candidate in (here / "fixtures", here.parent / "fixtures"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"the bundled fixtures are missing: looked in {here / 'fixtures'} and "
        f"{here.parent / 'fixtures'}; reinstall mcp-testbench"
    )
