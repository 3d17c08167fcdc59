"""Helm values for the NVIDIA DRA driver.

The guarded values (config/driver.py) are what makes the driver work on DRA node groups at
all; a user's `draDriverValues` are merged over everything else, but may not change a
guarded value. Values are built here, as plain data, and tested directly; the component
only passes them to Helm.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from components.config.driver import guarded_values
from components.dra_constants import RELEASE_NAME
from components.labels import system_node_labels
from components.merge import deep_merge
from components.model import DraDriverConfig, Taint
from components.values.release import ReleaseSpec, chart_location


def controller_placement(driver: DraDriverConfig, system_node_selector: Mapping[str, str]) -> dict[str, Any]:
    """Puts the compute-domain controller on the system nodes.

    25.12.0 requires a control-plane node, which a managed cluster never schedules on, so
    its required node affinity is replaced; 0.4.x only prefers one, and the selector suffices.
    """
    placement: dict[str, Any] = {"nodeSelector": dict(system_node_selector)}
    if not driver.renamed_chart:
        term = {
            "matchExpressions": [
                {"key": key, "operator": "In", "values": [value]} for key, value in system_node_selector.items()
            ]
        }
        placement["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
        }
    return placement


def dra_driver_values(
    driver: DraDriverConfig, gpu_taints: Iterable[Taint], system_node_selector: Mapping[str, str]
) -> dict[str, Any]:
    """The DRA driver's values: guarded values, controller placement, then the user's overrides."""
    values = guarded_values(driver, gpu_taints)
    if driver.compute_domains:
        values["controller"] = controller_placement(driver, system_node_selector)
    return deep_merge(values, driver.value_overrides)


def dra_driver_release(driver: DraDriverConfig, gpu_taints: Iterable[Taint]) -> ReleaseSpec:
    """The driver's chart, pinned, from the repository the stack names (an OCI chart by its full reference)."""
    return ReleaseSpec(
        release_name=RELEASE_NAME,
        version=driver.version,
        namespace=driver.namespace,
        values=dra_driver_values(driver, gpu_taints, system_node_labels()),
        **chart_location(driver.chart, driver.repository),
        secret_values=driver.secret_values,
    )
