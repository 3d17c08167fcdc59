"""prod's stack config with GPU quotas per team (`nebius-dra:queues`), as the queue tests write it."""

from __future__ import annotations

import json
from typing import Any

from components.config.stack_file import load_stack_config

TEAMS = [
    {"name": "research", "cohort": "h200", "quotas": [{"group": "h200-train", "gpus": 24}, {"group": "h200-burst", "gpus": 32}]},
    {"name": "inference", "cohort": "h200", "quotas": [{"group": "h200-train", "gpus": 8}, {"group": "h200-burst", "gpus": 32, "borrowingLimit": 16}]},
]  # fmt: skip


def prod_with(queues: dict[str, Any], **overrides: str) -> dict[str, str]:
    config = dict(load_stack_config("prod"))
    config["nebius-dra:queues"] = json.dumps(queues)
    config.update({f"nebius-dra:{key}": value for key, value in overrides.items()})
    return config
