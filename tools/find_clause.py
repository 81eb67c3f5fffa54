"""Where a clause's phrase is on a spec page, and the BCP-14 keyword in it: for writing a
check's `clause(page, phrase)` (harness/judging/_catalogue.py).

    python tools/find_clause.py REVISION PAGE "PHRASE"

PAGE is relative to the revision's folder of the spec data, without .mdx (basic/lifecycle,
basic/transports/stdio). The page and the phrase are read as the clause test reads them
(tests/harness/suite/test_clauses.py imports `normalise` from here): bold, code spans,
_italics_ and link targets dropped, white space folded. The spec data is found as the
tests find it: MCP_TESTBENCH_SPEC_DATA, by default the `shared` folder beside the checkout.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

DATA = Path(
    os.environ.get("MCP_TESTBENCH_SPEC_DATA") or Path(__file__).resolve().parents[2] / "shared"
)


def normalise(text: str) -> str:
    text = text.replace("**", "").replace("`", "")
    text = re.sub(r"(?<![\w/])_([^_\n]+?)_(?![\w/])", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"\s+", " ", text)


def main(revision: str, page: str, phrase: str) -> int:
    from harness.judging import keyword_of

    path = DATA / "mcp-spec" / revision / f"{page}.mdx"
    if not path.exists():
        print(f"no page {page} at {revision} (looked for {path})", file=sys.stderr)
        return 2
    count = normalise(path.read_text(encoding="utf-8")).count(normalise(phrase))
    try:
        keyword = keyword_of(normalise(phrase))
    except ValueError as exc:
        keyword = f"none usable ({exc})"
    print(f"{revision} {page}: occurs {count} time(s); keyword: {keyword}")
    return 0 if count else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
