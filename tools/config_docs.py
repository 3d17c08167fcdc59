"""`python -m tools.config_docs [--check]`: the README's tables of settings, written from the input model.

A setting's meaning is written once, on its model field (`components.stack_input.Doc`); this
renders the tables between the README's `generated` markers from it, as `tools.stack_schema`
renders the editor schema. `--check` exits 1 when the committed README is stale.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pydantic import BaseModel

from components.config.stack_file import PROJECT_DIR
from components.stack_input import GpuNodeGroupInput, field_docs

README = PROJECT_DIR / "README.md"
# Each generated table: the marker's name and the model whose fields it lists.
TABLES: dict[str, type[BaseModel]] = {"gpuNodeGroups fields": GpuNodeGroupInput}


def begin_marker(name: str) -> str:
    return f"<!-- generated from the model by python -m tools.config_docs: {name} -->"


END_MARKER = "<!-- end of generated table -->"


def table(model: type[BaseModel]) -> str:
    rows = [f"| `{name}` | {required} | {meaning} |" for name, required, meaning in field_docs(model)]
    return "\n".join(["| field | required | meaning |", "| --- | --- | --- |", *rows])


class StaleMarkersError(ValueError):
    """The README lacks a table's markers, or has them out of order."""


def rendered(text: str) -> str:
    """`text` (the README) with every generated table written afresh between its markers."""
    for name, model in TABLES.items():
        begin = begin_marker(name)
        start = text.find(begin)
        end = text.find(END_MARKER, start)
        if start < 0 or end < 0:
            raise StaleMarkersError(f"README.md has no {begin!r} ... {END_MARKER!r} pair")
        text = text[: start + len(begin)] + "\n" + table(model) + "\n" + text[end:]
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.config_docs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the README's tables are not up to date")
    args = parser.parse_args(argv)
    current = README.read_text(encoding="utf-8")
    try:
        text = rendered(current)
    except StaleMarkersError as error:
        print(error, file=sys.stderr)
        return 2
    if args.check:
        if text != current:
            print(f"{README} is stale: run python -m tools.config_docs", file=sys.stderr)
            return 1
        return 0
    README.write_text(text, encoding="utf-8")
    print(f"wrote {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
