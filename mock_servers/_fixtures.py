"""Where the bundled fixture scripts are, in a source checkout and in an installed copy, and
how a name given on the command line finds one."""

from __future__ import annotations

import difflib
from pathlib import Path, PurePath

from mock_servers.engine import ScriptError

__all__ = ["find_script", "fixtures_root"]


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


def find_script(path: str | Path, *, folders: bool = False) -> Path:
    """`path` when it exists; else the bundled script of that name (a relative path under
    the bundled folder, with or without a leading `fixtures/` or the `.json`, so the
    commands in the README work outside a checkout); else a ScriptError that names the
    nearest bundled scripts.

    With `folders`, a folder is found the same way (`validate tools/`). The caller tells
    a bundled script by the answer differing from `path`, and says which it used.
    """
    given = Path(path)
    if given.is_file() or (folders and given.is_dir()):
        return given
    root = fixtures_root()
    if not given.is_absolute():
        for name in _bundled_names(given):
            candidate = root / name
            if candidate.is_file() or (folders and candidate.is_dir()):
                return candidate
    what = "no such file or folder" if folders else "no such file"
    raise ScriptError(
        str(path),
        "",
        f"{what}, here or among the bundled scripts",
        _nearest(given, root),
    )


def _bundled_names(given: Path) -> list[PurePath]:
    """The names under the bundled folder that `given` may mean."""
    parts = given.parts
    names = [PurePath(*parts)]
    if parts and parts[0] == "fixtures":  # the README's paths, from a checkout
        names.append(PurePath(*parts[1:]))
    return names + [n.with_suffix(".json") for n in names if n.parts and n.suffix != ".json"]


def _nearest(given: Path, root: Path) -> str:
    scripts = sorted(p.relative_to(root).as_posix() for p in root.rglob("*.json"))
    if not scripts:
        return f"give a script's path (no bundled scripts under {root}: reinstall mcp-testbench)"
    wanted = given.as_posix().removeprefix("fixtures/")
    close = difflib.get_close_matches(wanted, scripts, n=3, cutoff=0.6)
    if not close:  # the file's name alone, in whichever folder
        names = {PurePath(s).name for s in scripts}
        near = set(difflib.get_close_matches(given.name, names, n=3, cutoff=0.6))
        close = [s for s in scripts if PurePath(s).name in near][:3]
    if close:
        return (
            f"give a script's path, or a bundled one's name; the nearest: {', '.join(close)} "
            f"(all of them are under {root})"
        )
    folders = sorted({PurePath(s).parts[0] for s in scripts if len(PurePath(s).parts) > 1})
    example = "tools/list-and-call.json" if "tools/list-and-call.json" in scripts else scripts[0]
    return (
        f"give a script's path, or a bundled one's name such as {example} "
        f"(folders: {', '.join(folders)}; all under {root})"
    )
