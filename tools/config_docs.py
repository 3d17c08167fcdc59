"""`python -m tools.config_docs [--check]`: `Pulumi.yaml`'s config block and the configuration page's tables, from the model.

A setting's name, type, bounds and meaning are written once, on its field of the input model
(`components.input`: a key's `Setting`, a GPU group field's `Doc`). This writes the
`config:` block of `Pulumi.yaml` (type, default, description) and the tables of
`docs/configuration.md` between their `generated` markers from it, as `tools.stack_schema` writes
the editor schema. A meaning links to a file by its path from the project root and to a section by
its anchor alone (`#gpu-metrics`); the table gets each link as seen from its page, the anchor on
the page whose heading it is, so a section can move between pages without a model edit.
`--check` exits 1 when a committed file is stale.
"""

from __future__ import annotations

import argparse
import re
import sys
import typing
from collections.abc import Sequence
from typing import Any

import yaml
from pydantic import BaseModel

from components.config.stack_file import PROJECT_DIR
from components.dra_constants import NAMESPACE
from components.input.meaning import REQUIRED, Setting, field_docs
from components.input.node_groups import GpuNodeGroupInput
from components.input.stack import StackInput, stack_settings
from tools.markdown_links import LINK, anchors, relative

CONFIGURATION_PAGE = PROJECT_DIR / "docs" / "configuration.md"
PROJECT_FILE = PROJECT_DIR / "Pulumi.yaml"
# Each generated table of fields: the marker's name and the model whose fields it lists.
TABLES: dict[str, type[BaseModel]] = {"gpuNodeGroups fields": GpuNodeGroupInput}
MARKDOWN_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def _unwrapped(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _scalar_type(annotation: Any) -> str | None:
    """The project-file type of a scalar annotation (`string`, `integer`, `boolean`), None for anything else."""
    annotation = _unwrapped(annotation)
    if typing.get_origin(annotation) is typing.Literal:
        kinds = {type(arg) for arg in typing.get_args(annotation)}
        return {frozenset({str}): "string", frozenset({int}): "integer"}.get(frozenset(kinds))
    return {str: "string", int: "integer", bool: "boolean"}.get(annotation)


def project_type(annotation: Any) -> dict[str, Any]:
    """How `Pulumi.yaml` types a key: a scalar, an array of scalars, or nothing (lists of objects and maps have no
    project-file type the CLI accepts, so the program validates them)."""
    scalar = _scalar_type(annotation)
    if scalar:
        return {"type": scalar}
    annotation = _unwrapped(annotation)
    if typing.get_origin(annotation) is list:
        item = _scalar_type(typing.get_args(annotation)[0])
        if item:
            return {"type": "array", "items": {"type": item}}
    return {}


def plain(markdown: str) -> str:
    """A meaning without its links, for `Pulumi.yaml` (a link to a section of the docs means nothing there)."""
    return MARKDOWN_LINK.sub(r"\1", markdown)


def project_config() -> dict[str, dict[str, Any]]:
    declared = {}
    for name, setting in stack_settings().items():
        spec = project_type(StackInput.model_fields[name].annotation)
        if setting.default is not REQUIRED:
            spec["default"] = setting.default
        spec["description"] = plain(setting.meaning)
        declared[f"{NAMESPACE}:{name}"] = spec
    return declared


def rendered_project(text: str) -> str:
    """`Pulumi.yaml` with its `config:` block (the last one of the file) written afresh from the model."""
    head = text[: text.index("\nconfig:\n") + 1]
    body = yaml.safe_dump({"config": project_config()}, sort_keys=False, allow_unicode=True, width=10**6)
    return head + body


def _shown_default(setting: Setting) -> str:
    if setting.shown_default is not None:
        return setting.shown_default
    if setting.default == "":
        return '`""`'
    if isinstance(setting.default, bool):
        return f"`{str(setting.default).lower()}`"
    flow = yaml.safe_dump(setting.default, default_flow_style=True, width=10**6).strip().removesuffix("\n...")
    return f"`{flow}`"


def _shown_type(name: str, setting: Setting) -> str:
    if setting.shown_type:
        return setting.shown_type
    declared = project_type(StackInput.model_fields[name].annotation).get("type")
    if declared:
        return "list" if declared == "array" else declared
    return "list" if typing.get_origin(_unwrapped(StackInput.model_fields[name].annotation)) is list else "map"


def key_table(section: str) -> str:
    rows = [
        f"| `{name}` | {_shown_type(name, setting)} | {_shown_default(setting)} | {setting.meaning} |"
        for name, setting in stack_settings().items()
        if setting.section == section
    ]
    return "\n".join(["| key | type | default | meaning |", "| --- | --- | --- | --- |", *rows])


def begin_marker(name: str) -> str:
    return f"<!-- generated from the model by python -m tools.config_docs: {name} -->"


END_MARKER = "<!-- end of generated table -->"


def table(model: type[BaseModel]) -> str:
    rows = [f"| `{name}` | {required} | {meaning} |" for name, required, meaning in field_docs(model)]
    return "\n".join(["| field | required | meaning |", "| --- | --- | --- |", *rows])


class StaleMarkersError(ValueError):
    """The configuration page lacks a table's markers, or has them out of order, or a meaning links nowhere."""


def docs_anchors(page_text: str) -> dict[str, set[str]]:
    """Each documentation page's heading anchors, by path from the project root; the configuration page's from
    `page_text`, the text being rendered."""
    pages = [PROJECT_DIR / "README.md", *sorted((PROJECT_DIR / "docs").glob("*.md"))]
    found = {page.relative_to(PROJECT_DIR).as_posix(): anchors(page.read_text(encoding="utf-8")) for page in pages}
    found[CONFIGURATION_PAGE.relative_to(PROJECT_DIR).as_posix()] = anchors(page_text)
    return found


def linked(markdown: str, page_text: str) -> str:
    """`markdown`'s links as links from the configuration page: a path from the project root made relative to
    `docs/`, an anchor alone pointed at the one page that has that heading."""
    here = CONFIGURATION_PAGE.relative_to(PROJECT_DIR).as_posix()
    index = docs_anchors(page_text)

    def one(match: re.Match[str]) -> str:
        target = match.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        if not path:
            if anchor in index[here]:
                return match.group(0)
            having = [name for name, found in index.items() if anchor in found]
            if len(having) != 1:
                where = f"{len(having)} pages ({', '.join(having)})" if having else "no page"
                raise StaleMarkersError(f"a meaning links to #{anchor}, a heading of {where}: name a section of one")
            path = having[0]
        return f"]({relative(path, 'docs')}{'#' + anchor if anchor else ''})"

    return LINK.sub(one, markdown)


def rendered(text: str) -> str:
    """`text` (the configuration page) with every generated table written afresh between its markers."""
    tables = {name: table(model) for name, model in TABLES.items()}
    tables |= {section: key_table(section) for section in dict.fromkeys(s.section for s in stack_settings().values())}
    for name, generated in tables.items():
        begin = begin_marker(name)
        start = text.find(begin)
        end = text.find(END_MARKER, start)
        if start < 0 or end < 0:
            raise StaleMarkersError(f"{CONFIGURATION_PAGE.name} has no {begin!r} ... {END_MARKER!r} pair")
        text = text[: start + len(begin)] + "\n" + linked(generated, text) + "\n" + text[end:]
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.config_docs", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when Pulumi.yaml or the configuration page is not up to date"
    )
    args = parser.parse_args(argv)
    try:
        files = {
            CONFIGURATION_PAGE: rendered(CONFIGURATION_PAGE.read_text(encoding="utf-8")),
            PROJECT_FILE: rendered_project(PROJECT_FILE.read_text(encoding="utf-8")),
        }
    except StaleMarkersError as error:
        print(error, file=sys.stderr)
        return 2
    stale = [path for path, text in files.items() if path.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"{path} is stale: run python -m tools.config_docs", file=sys.stderr)
        return 1 if stale else 0
    for path in stale:
        path.write_text(files[path], encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
