"""`python e2e/cli/pinned_charts.py`: the charts e2e/cli installs, one `chart version repository` line each.

Where no vendor directory holds the chart packages (a CI runner), they are pulled from their upstream
repositories at the stack's own default pins, so the e2e installs what a stack without overrides would.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from components.config.driver import CHART_LINES
from components.config.stack_file import declared_default
from components.dra_constants import (
    GPU_OPERATOR_CHART,
    GPU_OPERATOR_VERSION,
    LEGACY_CHART,
    NETWORK_OPERATOR_CHART,
    NGC_REPOSITORY,
)


def pinned_charts() -> list[tuple[str, str, str]]:
    driver = CHART_LINES[LEGACY_CHART]
    return [
        (driver.chart, driver.default_version, driver.repositories[0]),
        (GPU_OPERATOR_CHART, GPU_OPERATOR_VERSION, NGC_REPOSITORY),
        (NETWORK_OPERATOR_CHART, declared_default("networkOperatorVersion"), NGC_REPOSITORY),
    ]


if __name__ == "__main__":
    for chart, version, repository in pinned_charts():
        print(chart, version, repository)
