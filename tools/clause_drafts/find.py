"""Where a clause's phrase is on a spec page, and the BCP-14 keyword in it.

    python tools/clause_drafts/find.py REVISION PAGE "PHRASE"

PAGE is relative to the revision's folder of the spec data, without .mdx (basic/lifecycle,
basic/transports/stdio). The page's markdown is normalised first (bold, code spans,
_italics_ and link targets dropped; whitespace collapsed), as the clause test will.
The spec data is found as the tests find it: MCP_TESTBENCH_SPEC_DATA, by default the
`shared` folder beside the checkout.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

DATA = Path(
    os.environ.get("MCP_TESTBENCH_SPEC_DATA", Path(__file__).resolve().parents[3] / "shared")
)
KEYWORDS = (
    "MUST NOT", "SHALL NOT", "SHOULD NOT", "NOT RECOMMENDED",
    "MUST", "REQUIRED", "SHALL", "SHOULD", "RECOMMENDED", "MAY", "OPTIONAL",
)  # fmt: skip


def normalise(text: str) -> str:
    text = text.replace("**", "").replace("`", "")
    text = re.sub(r"(?<![\w/])_([^_\n]+?)_(?![\w/])", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"\s+", " ", text)


def keywords(phrase: str) -> list[str]:
    found, rest = [], phrase
    for keyword in KEYWORDS:
        if re.search(rf"\b{keyword}\b", rest):
            found.append(keyword)
            rest = re.sub(rf"\b{keyword}\b", " ", rest)
    return found


def main(revision: str, page: str, phrase: str) -> int:
    path = DATA / "mcp-spec" / revision / f"{page}.mdx"
    if not path.exists():
        print(f"no page {page} at {revision} (looked for {path})", file=sys.stderr)
        return 2
    count = normalise(path.read_text(encoding="utf-8")).count(normalise(phrase))
    found = keywords(normalise(phrase)) or "none"
    print(f"{revision} {page}: occurs {count} time(s); keywords in the phrase: {found}")
    return 0 if count else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
