"""Reading `Pulumi.yaml` and `Pulumi.<stack>.yaml` the way the Pulumi CLI merges them.

The offline plan, the tests and the live verifier all need a stack's config without the
CLI; this is the one place that turns the two files into the strings a program receives.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from components.dra_constants import NAMESPACE

PROJECT_DIR = Path(__file__).resolve().parent.parent.parent
PROJECT_FILE = PROJECT_DIR / "Pulumi.yaml"


def load_yaml_file(path: Path) -> Any:
    """Safe YAML through libyaml when the PyYAML wheel has it: the pure-Python parser costs a plan ~30 ms a file."""
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def project_config_keys(project_file: Path = PROJECT_FILE) -> list[str]:
    """The keys `Pulumi.yaml` declares, without the namespace: the one list of what the stack reads."""
    declared = load_yaml_file(project_file).get("config", {})
    return [key.split(":", 1)[1] for key in declared if key.startswith(f"{NAMESPACE}:")]


def stack_names(project_dir: Path = PROJECT_DIR) -> list[str]:
    """Every stack that has a `Pulumi.<stack>.yaml` beside the project file."""
    return sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in project_dir.glob("Pulumi.*.yaml"))


def load_stack_config(stack: str, project_dir: Path = PROJECT_DIR) -> dict[str, str]:
    """Project defaults overlaid with the stack file, as strings: the form a program receives."""
    project = load_yaml_file(project_dir / "Pulumi.yaml")
    stack_file = project_dir / f"Pulumi.{stack}.yaml"
    if not stack_file.exists():
        raise FileNotFoundError(f"no stack file {stack_file.name} in {project_dir}")
    values = {key: spec["default"] for key, spec in project.get("config", {}).items() if "default" in spec}
    values.update((load_yaml_file(stack_file) or {}).get("config", {}) or {})
    return {key: _as_config_string(value) for key, value in values.items()}


def _as_config_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value)
