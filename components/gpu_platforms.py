"""The GPU platforms Nebius offers, read from the one table that lists them: the policy pack's driver-preset table.

`policies/dra_guardrails/driver_presets.json` lists, per Kubernetes minor, every GPU platform Nebius
publishes driver presets for, each row with its source (nebius/nebius-solutions-library,
soperator/installations/example/driver_presets.tf) and the day it was read; the pack's rule
gpu-drivers-preset-known reads it too. A GPU platform is known when some minor's row names it, so a
misspelt one (`gpu-h20-sxm`) is refused by name rather than planned and reported unpriced. A platform
Nebius adds later is added to that table, with its source, before a stack uses it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

TABLE_FILE = Path(__file__).resolve().parent.parent / "policies" / "dra_guardrails" / "driver_presets.json"
_TABLE: dict[str, Any] = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
GPU_PLATFORMS_READ: str = _TABLE["read"]
GPU_PLATFORMS: tuple[str, ...] = tuple(
    dict.fromkeys(platform for row in _TABLE["presets"].values() for platform in row)
)
