"""The dated table of Nebius driver presets per Kubernetes minor and GPU platform, kept as data in `driver_presets.json`.

The file names the source of each row and the day the table was read, so the rule's message can
say how old its knowledge is, and updating the table is an edit of data with its date beside it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

TABLE_FILE = Path(__file__).with_name("driver_presets.json")
_TABLE: Mapping[str, Any] = json.loads(TABLE_FILE.read_text(encoding="utf-8"))
DRIVER_PRESETS_READ: str = _TABLE["read"]
DRIVER_PRESETS: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    minor: {platform: tuple(presets) for platform, presets in row.items()} for minor, row in _TABLE["presets"].items()
}
PRESET_SOURCES: Mapping[str, str] = _TABLE["sources"]
