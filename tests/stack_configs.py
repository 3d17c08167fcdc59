"""A stack's config as the tests change it.

`parsed` is the config the program parses with overrides, `refusal` the message of a refused change,
`without_presets` the GPU groups without their driversPreset, `with_compute_domains` the changes that turn
ComputeDomains on, `mutated` the program run of a changed config.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from components.config.errors import ConfigError
from components.config.stack import parse_stack_config
from components.config.stack_file import load_stack_config, program_config
from components.model import StackConfig
from tools.plan.mock_engine import ProgramRun, run_program


def parsed(stack: str = "dev", **overrides: Any) -> StackConfig:
    """The stack's config as the program parses it (keys without the namespace), with `overrides` applied."""
    raw = {key.split(":", 1)[1]: value for key, value in load_stack_config(stack).items()}
    raw.update({key: value if isinstance(value, str) else json.dumps(value) for key, value in overrides.items()})
    return parse_stack_config(raw, stack)


def without_presets(stack: str) -> list[dict]:
    groups = yaml.safe_load(load_stack_config(stack)["nebius-dra:gpuNodeGroups"])
    return [{key: value for key, value in group.items() if key != "driversPreset"} for group in groups]


# A GB200/GB300-class group, the systems ComputeDomains are for (draComputeDomains is refused without one); Nebius
# offers gpu-gb300 from Kubernetes 1.35 (policies/dra_guardrails/driver_presets.json).
GB300_GROUP = {
    "name": "gb300",
    "platform": "gpu-gb300",
    "preset": "4gpu-112vcpu-800gb",
    "driversPreset": "cuda13.0",
    "fixedNodeCount": 1,
}


def with_compute_domains(stack: str) -> dict[str, str]:
    """The changes (program keys, without the namespace) that turn ComputeDomains on: the stack's groups, a GB300 one."""
    groups = yaml.safe_load(load_stack_config(stack)["nebius-dra:gpuNodeGroups"])
    return {
        "draComputeDomains": "true",
        "kubernetesVersion": "1.35",
        "gpuNodeGroups": json.dumps([*groups, GB300_GROUP]),
    }


def mutated(stack_config, stack: str, groups: list[dict] | None = None, **settings: str) -> ProgramRun:
    """The program run of the stack's config (from the `stack_config` fixture) with its groups and settings replaced."""
    config = stack_config(stack)
    if groups is not None:
        config["nebius-dra:gpuNodeGroups"] = json.dumps(groups)
    config.update({f"nebius-dra:{key}": value for key, value in settings.items()})
    return run_program(stack, config=config)


def refusal(stack: str = "prod", **changes: str) -> str:
    with pytest.raises(ConfigError) as refused:
        parse_stack_config({**program_config(load_stack_config(stack)), **changes}, stack)
    return str(refused.value)
