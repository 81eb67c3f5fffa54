"""The normal form of the project's JSON data files (fixtures, schemas).

One form for every data file keeps diffs reviewable and makes "is this file hand-edited
into a different shape?" a mechanical check:
`python -m mock_servers._jsonfiles --check fixtures harness/protocol/schemas`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["find_unnormalised", "normalised_text"]


def normalised_text(value: Any) -> str:
    """Two-space indent, sorted keys, unicode kept, one trailing newline."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _json_files(paths: Iterable[Path]) -> Iterable[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(path.rglob("*.json"))
        else:
            yield path


def find_unnormalised(paths: Iterable[Path], *, fix: bool = False) -> list[str]:
    """One problem line per file that is not valid JSON or not in normal form."""
    problems = []
    for path in _json_files(paths):
        text = path.read_text(encoding="utf-8")
        try:
            value = json.loads(text)
        except ValueError as exc:
            problems.append(f"{path}: not valid JSON: {exc}")
            continue
        wanted = normalised_text(value)
        if text != wanted:
            if fix:
                path.write_text(wanted, encoding="utf-8")
            problems.append(f"{path}: not normalised" + (" (rewritten)" if fix else ""))
    return problems


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mock_servers._jsonfiles",
        description="Check (or rewrite) JSON data files in the project's normal form.",
    )
    parser.add_argument(
        "paths", nargs="+", type=Path, help="files or folders (searched for *.json)"
    )
    parser.add_argument("--fix", action="store_true", help="rewrite files into normal form")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        parser.error(f"no such file or folder: {', '.join(missing)}")
    files = list(_json_files(args.paths))
    problems = find_unnormalised(files, fix=args.fix)
    for line in problems:
        print(line)
    print(f"{len(files)} JSON files checked, {len(problems)} not normalised")
    return 1 if problems and not args.fix else 0


if __name__ == "__main__":
    sys.exit(main())
