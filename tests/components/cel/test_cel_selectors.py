"""Every CEL selector the stacks register compiles, and selects the right sample devices.

The sample devices in tests/data are ResourceSlices shaped like the NVIDIA driver's and
DRANet's. A selector sees a device the way the scheduler shows it: `device.driver`, and
`device.attributes[domain][name]` where unqualified names belong to the driver's domain.
Kubernetes answers an unknown domain with an empty map; the view seeds the domains in play.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import celpy
import pytest
import yaml

from components.cel import removed_attribute, selector_problem
from components.dra_constants import CLASS_DRIVERS, GPU_DRIVER, PCIE_ROOT_ATTRIBUTE, REMOVED_GPU_ATTRIBUTES
from components.values.claim_templates import product_selector
from tests.cel_views import cel_view, registered_selectors
from tests.helpers import TESTS

DATA = TESTS / "data"
SAMPLES = {
    "h200": ("resourceslice-nvidia-h200.yaml", "gpu-0"),
    "h100": ("resourceslice-nvidia-h100.yaml", "gpu-0"),
    "ib-nic": ("resourceslice-dranet-ib.yaml", "ibp140s0"),
    "ethernet": ("resourceslice-dranet-ib.yaml", "eth0"),
}
# (template, request) -> the sample devices its selectors must pick out of those its class offers.
EXPECTED = {
    ("gpu-by-product", "gpu"): {"h200"},
    ("h200-full-node", "gpus"): {"h200"},
}
_CEL = celpy.Environment()


@cache
def sample(label: str) -> tuple[str, dict[str, Any]]:
    file_name, device_name = SAMPLES[label]
    spec = yaml.safe_load((DATA / file_name).read_text())["spec"]
    (device,) = [d for d in spec["devices"] if d["name"] == device_name]
    return spec["driver"], device


def selects(expression: str, label: str) -> bool:
    """True or False as the scheduler would decide; an evaluation error fails the test (it would abort allocation)."""
    try:
        result = _CEL.program(_CEL.compile(expression)).evaluate(celpy.json_to_cel(cel_view(*sample(label))))
    except celpy.CELEvalError as error:
        raise AssertionError(f"{expression} on {label}: {error}") from error
    return bool(result)


def test_every_registered_selector_has_an_expectation(stack_runs):
    registered = {key for run in stack_runs.values() for key in registered_selectors(run)}
    assert registered == set(EXPECTED)


def test_registered_selectors_compile_and_select_what_they_should(stack_runs):
    for stack, run in stack_runs.items():
        for (template, request), (device_class, expressions) in registered_selectors(run).items():
            offered = [label for label in SAMPLES if sample(label)[0] == CLASS_DRIVERS[device_class]]
            for expression in expressions:
                assert selector_problem(expression) is None, f"{stack}/{template}: {expression}"
            chosen = {label for label in offered if all(selects(e, label) for e in expressions)}
            assert chosen == EXPECTED[(template, request)], f"{stack}/{template}/{request}"


def test_product_selector_lists_products_and_quotes_them():
    both = product_selector(["NVIDIA H200", "NVIDIA H100 80GB HBM3"])
    assert selects(both, "h200") and selects(both, "h100")
    assert not selects(product_selector(["NVIDIA H100 80GB HBM3"]), "h200")
    awkward = product_selector(['NVIDIA "H200"\\'])
    assert selector_problem(awkward) is None
    assert not selects(awkward, "h200")


@pytest.mark.parametrize(
    ("expression", "chosen"),
    [
        ('device.attributes["dra.net"].rdma', {"ib-nic"}),
        ('device.attributes["dra.net"].encapsulation == "infiniband"', {"ib-nic"}),
        ('device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00"', {"ethernet"}),
    ],
)
def test_nic_selectors_tell_infiniband_from_ethernet(expression, chosen):
    assert {label for label in ("ib-nic", "ethernet") if selects(expression, label)} == chosen


def test_both_drivers_publish_the_pcie_root_the_aligned_template_matches():
    domain, _, name = PCIE_ROOT_ATTRIBUTE.partition("/")
    for label in SAMPLES:
        assert name in cel_view(*sample(label))["device"]["attributes"][domain], label


@pytest.mark.parametrize("attribute", REMOVED_GPU_ATTRIBUTES)
def test_removed_gpu_attributes_are_flagged_and_really_absent(attribute):
    expression = f'device.attributes["gpu.nvidia.com"].{attribute} == 0'
    assert removed_attribute(expression) == attribute
    assert removed_attribute(f'device.attributes["gpu.nvidia.com"]["{attribute}"] == 0') == attribute
    assert attribute not in cel_view(*sample("h200"))["device"]["attributes"][GPU_DRIVER]
    with pytest.raises(AssertionError, match="on h200"):
        selects(expression, "h200")


def test_attributes_merely_named_like_removed_ones_are_not_flagged():
    assert removed_attribute('device.attributes["gpu.nvidia.com"].productName.indexOf("H") == 0') is None
    assert removed_attribute('device.attributes["dra.net"].ifName == "index"') is None
