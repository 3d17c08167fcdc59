"""`python -m tools.stack_schema [--check]`: the JSON Schema of `Pulumi.<stack>.yaml`, for editors.

Generated from the same pydantic schema the program validates with, so an editor that
validates a stack file (the YAML language server reads `# yaml-language-server: $schema=...`)
flags what the program would refuse: unknown keys of the project, wrong types, patterns,
bounds. Defaults and descriptions come from `Pulumi.yaml`. Rules that span several keys
(driver modes, name lengths, CEL) are the program's alone. `--check` exits 1 when the
committed file is stale.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from components.config.schema import SECRET_CAPABLE_KEYS, StackInput
from components.config.stack_file import PROJECT_DIR, load_yaml_file
from components.dra_constants import NAMESPACE

SCHEMA_FILE = PROJECT_DIR / "docs" / "stack-file.schema.json"
SECURE_VALUE = {
    "type": "object",
    "required": ["secure"],
    "additionalProperties": False,
    "properties": {"secure": {"type": "string", "description": "a value encrypted by `pulumi config set --secret`"}},
}


def _ecma_patterns(node: Any) -> Any:
    """Python's whole-string anchor `\\Z` is `$` in the ECMA regexes editors run (no trailing-newline match there)."""
    if isinstance(node, dict):
        return {
            key: (value.replace("\\Z", "$") if key == "pattern" else _ecma_patterns(value))
            for key, value in node.items()
        }
    if isinstance(node, list):
        return [_ecma_patterns(item) for item in node]
    return node


def stack_file_schema() -> dict[str, Any]:
    model = _ecma_patterns(StackInput.model_json_schema(mode="validation"))
    declared = load_yaml_file(PROJECT_DIR / "Pulumi.yaml")["config"]
    properties: dict[str, Any] = {}
    for key, field_schema in model["properties"].items():
        spec = declared[f"{NAMESPACE}:{key}"]
        field_schema = {**field_schema, "description": spec.get("description", field_schema.get("description", ""))}
        field_schema.pop("title", None)
        if "default" in spec:
            field_schema["default"] = spec["default"]
        if key in SECRET_CAPABLE_KEYS:
            field_schema = {"anyOf": [field_schema, SECURE_VALUE], "description": field_schema["description"]}
        properties[f"{NAMESPACE}:{key}"] = field_schema
    names = "|".join(model["properties"])
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"Pulumi stack file of the {NAMESPACE} project",
        "description": __doc__.split("\n\n")[1].replace("\n", " "),
        "type": "object",
        "properties": {
            "config": {
                "type": "object",
                "properties": properties,
                "required": sorted(key for key in properties if "default" not in declared[key]),
                "propertyNames": {"not": {"pattern": f"^{NAMESPACE}:(?!({names})$)"}},
            },
            "secretsprovider": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "encryptionsalt": {"type": "string"},
        },
        "required": ["config"],
        "$defs": model["$defs"],
    }


def rendered() -> str:
    return json.dumps(stack_file_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.stack_schema", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed schema is not up to date")
    parser.add_argument("--out", type=Path, default=SCHEMA_FILE)
    args = parser.parse_args(argv)
    text = rendered()
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: run python -m tools.stack_schema", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
