"""What a pinned Helm release installs, as plain data the components hand to Helm."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

RELEASE_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class ReleaseSpec:
    """One pinned chart: installed atomically (a failed install rolls back) into its own namespace."""

    release_name: str
    chart: str
    version: str
    namespace: str
    values: dict[str, Any]
    repository: str | None
    timeout_seconds: int = RELEASE_TIMEOUT_SECONDS
    secret_values: bool = False
