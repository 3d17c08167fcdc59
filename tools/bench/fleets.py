"""The generated stacks `make bench` plans: dev's config with N identical GPU groups and M user claim templates."""

from __future__ import annotations

import json

CLAIM_TEMPLATES_KEY = "userClaimTemplates"
# (GPU groups, user claim templates) per scenario; (1, 0) is the smallest, (100, 200) and (1000, 2000) the fleets
# the targets are set on.
GENERATED = ((1, 0), (10, 0), (100, 0), (1, 200), (10, 20), (100, 200), (1000, 2000))
FLEET = (100, 200)
FLEET_10X = (1000, 2000)
# Ten times the groups and templates each step: the marginal cost of a resource is reported per decade.
DECADES = ((10, 20), FLEET, FLEET_10X)


def generated_config(gpu_groups: int, claim_templates: int) -> dict[str, str]:
    """dev's merged config with `gpu_groups` identical 8-GPU groups and `claim_templates` one-GPU templates."""
    from components.config.stack_file import load_stack_config

    config = load_stack_config("dev")
    groups = [
        {
            "name": f"g{index:03d}",
            "platform": "gpu-h200-sxm",
            "preset": "8gpu-128vcpu-1600gb",
            "driversPreset": "cuda13.0",
            "fixedNodeCount": 1,
        }
        for index in range(gpu_groups)
    ]
    config["nebius-dra:gpuNodeGroups"] = json.dumps(groups)
    return with_user_templates(config, claim_templates)


def with_user_templates(config: dict[str, str], count: int) -> dict[str, str]:
    """`config` with `count` one-GPU user claim templates (none: unchanged)."""
    if count:
        templates = [
            {
                "name": f"user-{index:03d}",
                "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}],
            }
            for index in range(count)
        ]
        config[f"nebius-dra:{CLAIM_TEMPLATES_KEY}"] = json.dumps(templates)
    return config


def fleet_label(groups: int, templates: int) -> str:
    return f"{groups} GPU group{'s' if groups != 1 else ''}, {templates} user claim templates"
