"""`python -m tools.stack_schema [--check]`: the JSON Schema of `Pulumi.<stack>.yaml`, for editors.

Generated from the same pydantic schema the program validates with, so an editor that
validates a stack file (the YAML language server reads `# yaml-language-server: $schema=...`)
flags what the program would refuse: unknown keys of the project, wrong types, patterns,
bounds. Defaults and descriptions are each key's `Setting`, as `tools.config_docs` writes
them into `Pulumi.yaml`. Rules that span several keys (driver modes, name lengths, CEL) are
the program's alone. `--check` exits 1 when the committed file is stale.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from components.config.reading import InputError, check_file_flag, check_output_flag
from components.config.stack_file import PROJECT_DIR
from components.dra_constants import NAMESPACE
from components.input.stack import SECRET_CAPABLE_KEYS, StackInput
from tools.config_docs import project_config

SCHEMA_FILE = PROJECT_DIR / "docs" / "stack-file.schema.json"
# A key of the project's namespace, which must then be one the project declares.
PROJECT_KEY_PATTERN = f"^{NAMESPACE}:"
SECURE_VALUE = {
    "type": "object",
    "required": ["secure"],
    "additionalProperties": False,
    "properties": {"secure": {"type": "string", "description": "a value encrypted by `pulumi config set --secret`"}},
}


class _KeysChecked(GenerateJsonSchema):
    """A map's key pattern as `propertyNames`, not pydantic's `patternProperties`.

    Under `patternProperties` a key that does not match the pattern is not checked at all, so an
    editor would pass a malformed label key the program refuses.
    """

    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        json_schema = super().dict_schema(schema)
        if "patternProperties" in json_schema:
            ((pattern, values),) = json_schema.pop("patternProperties").items()
            json_schema["propertyNames"] = {"pattern": pattern, **json_schema.get("propertyNames", {})}
            json_schema["additionalProperties"] = values
        return json_schema


def stack_file_schema() -> dict[str, Any]:
    model = StackInput.model_json_schema(mode="validation", schema_generator=_KeysChecked)
    declared = project_config()
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
                # A validator names a misspelt key and lists the declared ones; other namespaces
                # (providers' config such as kubernetes:) are not the project's to check.
                "propertyNames": {"if": {"pattern": PROJECT_KEY_PATTERN}, "then": {"enum": sorted(properties)}},
            },
            "secretsprovider": {"type": "string"},
            "encryptedkey": {"type": "string"},
            "encryptionsalt": {"type": "string"},
            # Pulumi ESC imports; the offline tools refuse it (they cannot read its values), the CLI takes it.
            "environment": {"description": "Pulumi ESC environments the stack imports (not read by the offline tools)"},
        },
        # The Pulumi CLI's ProjectStack holds nothing else (STACK_FILE_BLOCKS): a misspelt block is flagged.
        "additionalProperties": False,
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
    try:
        (check_file_flag if args.check else check_output_flag)(args.out, "--out")
    except InputError as error:
        print(f"python -m tools.stack_schema: {error}", file=sys.stderr)
        return 2
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
