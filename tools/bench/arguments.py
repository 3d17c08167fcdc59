"""The benchmarks' counts on the command line: whole numbers from 1 (or another least) up, refused by argparse (exit 2).

`type=int` alone took `--runs 0` and `--runs -1`: `python -m tools.bench` printed a table of `nan` and exited 0,
`bench-cli` set up its control plane and CLI stacks for minutes before `statistics.median` of nothing raised, and
`bench-e2e --pods 0` (or `--nodes 1`: no InfiniBand node) started its control plane before `min()` of no pods did.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable

_DIGITS = re.compile(r"[0-9]+")


def at_least(least: int, what: str) -> Callable[[str], int]:
    """An argparse `type`: ASCII digits, `least` or more (`int` also takes `+3`, ` 3`, `1_000` and other scripts')."""

    def count(text: str) -> int:
        if not _DIGITS.fullmatch(text) or int(text) < least:
            raise argparse.ArgumentTypeError(f"{text!r}: {what} must be a whole number, {least} or more")
        return int(text)

    return count


positive = at_least(1, "a count")
