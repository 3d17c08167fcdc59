"""What the stack and the verifier rely on, checked against the ResourceSlices the real driver published for an H200.

The files in tests/data/captured/ are the real captures of both driver lines (25.12.0 and 0.4.1), node name
rewritten only (README there). The built-in templates' selectors must select the device, the verifier must find
it by node, pool and name and read its uuid, and the attributes the stack reads or refuses must be as it assumes.
"""

from __future__ import annotations

import json

import celpy
import pytest

from components.cel import selector_problem
from components.dra_constants import GPU_DRIVER, GPU_PRODUCTS, PCIE_ROOT_ATTRIBUTE, REMOVED_GPU_ATTRIBUTES
from components.values.claim_templates import product_selector
from tests.cel_views import cel_view, registered_selectors
from tests.helpers import TESTS
from tools.verify.objects import attribute, devices_on_node, find_device

CAPTURED = TESTS / "data" / "captured"
LINES = {
    "nvidia-dra-driver-gpu 25.12.0": "resourceslices-h200-nvidia-dra-driver-gpu-25.12.0.json",
    "dra-driver-nvidia-gpu 0.4.1": "resourceslices-h200-dra-driver-nvidia-gpu-0.4.1.json",
}
NODE = "gpu-node-0"


def captured(line: str) -> list[dict]:
    return json.loads((CAPTURED / LINES[line]).read_text())["items"]


@pytest.mark.parametrize("line", LINES)
def test_the_verifier_finds_the_gpu_by_node_pool_and_name_and_reads_its_uuid(line):
    slices = captured(line)
    [device] = devices_on_node(slices, GPU_DRIVER, NODE)
    assert device["name"] == "gpu-0"  # gpu-<minor>
    assert attribute(device, GPU_DRIVER, "type") == "gpu"  # what check_gpu_slices counts
    assert find_device(slices, GPU_DRIVER, NODE, "gpu-0") is device  # pool name = node name
    assert attribute(device, GPU_DRIVER, "uuid").startswith("GPU-")


@pytest.mark.parametrize("line", LINES)
def test_the_attributes_the_stack_reads_are_published_and_the_removed_ones_are_not(line):
    [item] = captured(line)
    assert item["spec"]["driver"] == GPU_DRIVER
    [device] = item["spec"]["devices"]
    assert attribute(device, GPU_DRIVER, "productName") == GPU_PRODUCTS["gpu-h200-sxm"]  # the default it selects
    assert PCIE_ROOT_ATTRIBUTE in device["attributes"]  # gpu-nic-aligned's matchAttribute
    assert not set(REMOVED_GPU_ATTRIBUTES) & set(device["attributes"])  # index and minor, gone since 25.8.0
    assert device["capacity"]["memory"]["value"].endswith("Mi")
    assert "taints" not in device and "sharedCounters" not in item["spec"]  # gates off, as captured


@pytest.mark.parametrize("line", LINES)
def test_both_lines_publish_the_same_device(line):
    specs = {name: captured(name)[0]["spec"] for name in LINES}
    assert specs[line] == specs["nvidia-dra-driver-gpu 25.12.0"]


@pytest.mark.parametrize("line", LINES)
def test_every_gpu_selector_the_stacks_register_selects_the_captured_h200(stack_runs, line):
    [device] = captured(line)[0]["spec"]["devices"]
    environment = celpy.Environment()
    view = celpy.json_to_cel(cel_view(GPU_DRIVER, device))
    selectors = [
        e for run in stack_runs.values() for _, expressions in registered_selectors(run).values() for e in expressions
    ]
    assert product_selector([GPU_PRODUCTS["gpu-h200-sxm"]]) in selectors
    for expression in selectors:
        assert selector_problem(expression) is None
        assert environment.program(environment.compile(expression)).evaluate(view), (line, expression)
