"""The stack's Kueue values name keys the pinned chart reads: charts/kueue of the served module sigs.k8s.io/kueue.

The production chart is the OCI chart registry.k8s.io/kueue/charts/kueue of the same tag, which Kueue's
release script (hack/helm-chart-package.sh) packages from this directory with its version, appVersion and
the controller image rewritten to registry.k8s.io/kueue/kueue:<tag> (pullPolicy IfNotPresent): the stack
sets that image itself, so both charts render the same manager.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from kueue_build import module_dir

from components.config import parse_stack_config
from components.config.stack_file import load_stack_config
from components.labels import system_node_labels
from components.queue_model import KUEUE_CHART, KUEUE_VERSION
from components.values.kueue import kueue_values


@pytest.fixture(scope="module")
def chart():
    return module_dir() / "charts" / "kueue"


def _paths(values: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if isinstance(values, dict) and values:
        return [path for key, value in values.items() for path in _paths(value, (*prefix, key))]
    return [prefix]


def test_the_module_chart_is_the_pinned_one(chart):
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    assert (meta["name"], meta["version"], meta["appVersion"]) == (KUEUE_CHART, KUEUE_VERSION, f"v{KUEUE_VERSION}")


def test_every_value_the_stack_sets_is_a_key_of_the_charts_values(chart):
    raw = {key.split(":", 1)[1]: value for key, value in load_stack_config("prod").items()}
    raw["queues"] = json.dumps({"teams": [{"name": "a", "quotas": [{"group": "h200-train", "gpus": 8}]}]})
    values = kueue_values(parse_stack_config(raw, "prod").queues, system_node_labels())
    defaults = yaml.safe_load((chart / "values.yaml").read_text())
    for path in _paths(values):
        where: Any = defaults
        for part in path:
            if where == {}:  # a free-form map of the chart (nodeSelector: {}): its keys are the user's
                break
            assert isinstance(where, dict) and part in where, f"chart has no {'.'.join(path)}"
            where = where[part]
    templates = (chart / "templates" / "manager" / "manager.yaml").read_text()
    assert ".Values.controllerManager.nodeSelector" in templates
    assert 'include "kueue.featureGates"' in templates
