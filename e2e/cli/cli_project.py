"""This repository's Pulumi project, copied for the real CLI, with a stack file written the way users write one.

The CLI writes into the project directory (`stack init` adds the encryption salt to the stack file,
`config set` rewrites it), so each test runs on a copy: the program, the policy pack and the data
they read, the real stack files, and `venv` as a link to the repository's virtualenv (both
Pulumi.yaml and policies/PulumiPolicy.yaml name it relatively).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
PROJECT_ITEMS = ("Pulumi.yaml", "__main__.py", "components", "policies", "prices", "requirements.txt")


def copy_project(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for item in PROJECT_ITEMS:
        source = REPO / item
        if source.is_dir():
            shutil.copytree(source, dest / item, ignore=ignore)
        else:
            shutil.copyfile(source, dest / item)
    for stack_file in REPO.glob("Pulumi.*.yaml"):
        shutil.copyfile(stack_file, dest / stack_file.name)
    (dest / "venv").symlink_to(REPO / "venv", target_is_directory=True)
    return dest


def declared_types(project: Path) -> dict[str, str | None]:
    """Each config key's `type` in Pulumi.yaml (None: untyped, a list of objects or a map)."""
    config = yaml.safe_load((project / "Pulumi.yaml").read_text())["config"]
    return {key: spec.get("type") for key, spec in config.items()}


def stack_file_value(raw: str, declared: str | None) -> Any:
    """A value as a user writes it in YAML, from the string the CLI hands the program: typed by Pulumi.yaml."""
    if declared == "string":
        return raw
    return yaml.safe_load(raw)


def write_stack_file(project: Path, stack: str, config: Mapping[str, str]) -> Path:
    """Pulumi.<stack>.yaml holding `config` (full keys to the strings the program would receive)."""
    types = declared_types(project)
    document = {"config": {key: stack_file_value(value, types.get(key)) for key, value in config.items()}}
    path = project / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=True))
    return path
