"""The links and heading anchors of the project's Markdown pages, as GitHub renders them.

The README and `docs/` link to each other's sections by anchor; `python -m tools.config_docs`
points a setting's link at the page that holds the section, and `tests/test_docs.py` checks that
every relative link reaches a file and, with an anchor, a heading of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import PurePosixPath

HEADING = re.compile(r"^(#{1,6}) +(.+?) *#*$", re.MULTILINE)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^()\s]+)\)")


def prose(text: str) -> str:
    """`text` without its fenced code blocks, whose `#` lines are comments and whose `](` are code."""
    return FENCE.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lowercase, punctuation but `-` and `_` dropped, spaces to `-`."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).lower()
    text = re.sub(r"[^\w\- ]", "", text, flags=re.ASCII)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a page, a repeated heading's with GitHub's `-1`, `-2` suffixes."""
    seen: dict[str, int] = {}
    found = set()
    for match in HEADING.finditer(prose(text)):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_targets(text: str) -> Iterator[str]:
    """The targets of a page's links that point into the repository (not a URL, not mail)."""
    for match in LINK.finditer(prose(text)):
        target = match.group(1)
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target):
            yield target


def relative(path: str, start: str) -> str:
    """`path` (from the project root) as a link from the folder `start` (from the project root)."""
    parts, base = PurePosixPath(path).parts, PurePosixPath(start).parts if start not in ("", ".") else ()
    common = 0
    while common < min(len(parts), len(base)) and parts[common] == base[common]:
        common += 1
    return "/".join([".."] * (len(base) - common) + list(parts[common:])) or "."
