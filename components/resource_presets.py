"""The resource presets Nebius offers on each platform, read from the dated table `resource_presets.json`.

A preset's shape (`<G>gpu-<C>vcpu-<M>gb`) says nothing of whether a platform has it: `4gpu-64vcpu-800gb` on
gpu-h200-sxm, or H200's `8gpu-128vcpu-1600gb` on gpu-b200-sxm-a, would plan and fail only at `pulumi up`. So the
config check refuses a preset its platform's row does not list (components/config/node_groups.py for GPU groups,
components/config/stack.py for the system group), naming the presets offered and this table, where a preset Nebius
adds later goes with its source. Each row names its source and the day it was read; the program alone reads it (the
policy pack judges presets by none of its rules).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from components.shown import shown

TABLE_FILE = Path(__file__).with_name("resource_presets.json")
TABLE_NAME = TABLE_FILE.relative_to(TABLE_FILE.parents[1]).as_posix()


@dataclass(frozen=True)
class OfferedPresets:
    """One platform's row: the presets Nebius offers on it, where that was read and on which day."""

    presets: tuple[str, ...]
    source: str
    read: str


OFFERED_PRESETS: dict[str, OfferedPresets] = {
    platform: OfferedPresets(tuple(row["presets"]), row["source"], row["read"])
    for platform, row in json.loads(TABLE_FILE.read_text(encoding="utf-8"))["platforms"].items()
}


def unoffered_preset(platform: str, preset: str, platform_key: str = "platform") -> str | None:
    """Why `preset` is no preset Nebius offers on `platform` (what follows `preset got ...`), or None when it is.

    `platform_key` names the setting the platform came from, so the line is held back when that setting was refused."""
    row = OFFERED_PRESETS.get(platform)
    if row is None:
        return (
            f"{shown(preset)}, but the table of the presets Nebius offers ({TABLE_NAME}) has no row for {platform_key} "
            f"{shown(platform)} (its rows: {', '.join(OFFERED_PRESETS)}); add the platform's presets there with their "
            "source and the day you read them"
        )
    if preset in row.presets:
        return None
    return (
        f"{shown(preset)}, which Nebius does not offer on {platform_key} {shown(platform)} (offered: "
        f"{', '.join(row.presets)}; {TABLE_NAME}, read {row.read} from {row.source}); if Nebius offers it now "
        f"(`nebius compute platform list`), add it to that row with its source"
    )
