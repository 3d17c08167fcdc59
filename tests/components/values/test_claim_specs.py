"""The built-in and user claim templates as data: the guide's shapes, the stack's limits, valid v1 objects."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import kubernetes_validate
import pytest
import yaml

from components.config.stack import parse_stack_config
from components.config.stack_file import load_stack_config
from components.dra_constants import (
    BUILTIN_TEMPLATES,
    GPU_NIC_TEMPLATE,
    IB_CLASS,
    NETWORK_TEMPLATES,
    PCIE_ROOT_ATTRIBUTE,
    RESOURCE_API_VERSION,
)
from components.model import (
    NO_CLAIMS,
    ConstraintConfig,
    DeviceRequestConfig,
    DeviceSelection,
    OpaqueConfig,
    UserClaimTemplate,
)
from components.values.claim_templates import builtin_template_specs, claim_template_specs, user_template_spec

# The two templates exactly as the Nebius DRA guide writes them ("Request a GPU", "Request an
# InfiniBand interface"): the stack's built-ins must be drop-in equal.
GUIDE_TEMPLATES = yaml.safe_load(
    """
gpu:
  spec:
    devices:
      requests:
        - name: gpu
          exactly: {deviceClassName: gpu.nvidia.com, count: 1}
ib-network:
  spec:
    devices:
      requests:
        - name: ib
          exactly: {deviceClassName: ib.networking.nebius.ai, count: 1}
"""
)


def claim_template_manifest(
    name: str, namespace: str, spec: Mapping[str, Any], labels: Mapping[str, str]
) -> dict[str, Any]:
    """The whole object as `kubectl apply` would take it, for the schema check."""
    return {
        "apiVersion": RESOURCE_API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": dict(spec),
    }


def all_selectors(spec: Mapping[str, Any]) -> list[str]:
    """Every CEL expression in a template spec, for compiling and evaluating."""
    return [
        selector["cel"]["expression"]
        for request in spec["spec"]["devices"]["requests"]
        for selector in request["exactly"].get("selectors", [])
    ]


def builtins(enabled, infiniband: bool = True, multi_gpu_count: int = 8, products=("NVIDIA H200",)) -> dict:
    claims = replace(
        NO_CLAIMS,
        builtin_templates=tuple(enabled),
        infiniband=infiniband,
        multi_gpu_count=multi_gpu_count,
        gpu_products=tuple(products),
    )
    return builtin_template_specs(claims)


def all_builtins(infiniband: bool = True, multi_gpu_count: int = 8, products=("NVIDIA H200",)) -> dict:
    return builtins(BUILTIN_TEMPLATES, infiniband, multi_gpu_count, products)


def validate(name: str, spec: dict) -> None:
    kubernetes_validate.validate(
        claim_template_manifest(name, "dra-samples", spec, {"app": "x"}), "1.34.0", strict=True
    )


@pytest.mark.parametrize("name", ["gpu", "ib-network"])
def test_guide_templates_are_built_as_written(name):
    assert all_builtins()[name] == GUIDE_TEMPLATES[name]


def test_every_builtin_is_a_valid_v1_object():
    specs = all_builtins()
    assert set(specs) == set(BUILTIN_TEMPLATES)
    for name, spec in specs.items():
        validate(name, spec)


def test_network_templates_need_infiniband():
    assert not set(all_builtins(infiniband=False)) & set(NETWORK_TEMPLATES)
    assert set(NETWORK_TEMPLATES) <= set(all_builtins(infiniband=True))


@pytest.mark.parametrize(("count", "present"), [(0, False), (1, False), (2, True), (8, True)])
def test_multi_gpu_needs_two_gpus_and_asks_for_the_count(count, present):
    specs = all_builtins(multi_gpu_count=count)
    assert ("multi-gpu" in specs) is present
    if present:
        assert specs["multi-gpu"]["spec"]["devices"]["requests"] == [
            {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": count}}
        ]


def test_disabled_builtins_are_not_built():
    assert set(builtins(["gpu"])) == {"gpu"}
    assert builtins([]) == {}


def test_gpu_and_nic_share_a_pcie_root_in_one_claim():
    devices = all_builtins()[GPU_NIC_TEMPLATE]["spec"]["devices"]
    assert [(r["name"], r["exactly"]["deviceClassName"]) for r in devices["requests"]] == [
        ("gpu", "gpu.nvidia.com"),
        ("nic", IB_CLASS),
    ]
    assert devices["constraints"] == [{"requests": ["gpu", "nic"], "matchAttribute": PCIE_ROOT_ATTRIBUTE}]


def test_product_template_selects_on_the_configured_products():
    spec = all_builtins(products=("NVIDIA H200", "NVIDIA H100 80GB HBM3"))["gpu-by-product"]
    (selector,) = all_selectors(spec)
    assert selector == 'device.attributes["gpu.nvidia.com"].productName in ["NVIDIA H200", "NVIDIA H100 80GB HBM3"]'


def test_user_template_keeps_every_field_and_validates():
    template = UserClaimTemplate(
        name="shared-gpu",
        requests=(
            DeviceRequestConfig(
                "gpus",
                DeviceSelection(
                    "gpu.nvidia.com", None, "All", ('device.attributes["gpu.nvidia.com"].architecture == "Hopper"',)
                ),
            ),
            DeviceRequestConfig("nic", DeviceSelection(IB_CLASS, 2, "ExactCount")),
        ),
        constraints=(
            ConstraintConfig(PCIE_ROOT_ATTRIBUTE, ("gpus", "nic")),
            ConstraintConfig("dra.net/numaNode", ("nic",)),
        ),
        config=(
            OpaqueConfig(
                "gpu.nvidia.com",
                {
                    "apiVersion": "resource.nvidia.com/v1beta1",
                    "kind": "GpuConfig",
                    "sharing": {"strategy": "TimeSlicing"},
                },
                ("gpus",),
            ),
        ),
    )
    spec = user_template_spec(template)
    devices = spec["spec"]["devices"]
    assert devices["requests"][0]["exactly"] == {
        "deviceClassName": "gpu.nvidia.com",
        "allocationMode": "All",
        "selectors": [{"cel": {"expression": 'device.attributes["gpu.nvidia.com"].architecture == "Hopper"'}}],
    }
    assert devices["requests"][1]["exactly"] == {"deviceClassName": IB_CLASS, "count": 2}
    assert devices["constraints"] == [
        {"requests": ["gpus", "nic"], "matchAttribute": PCIE_ROOT_ATTRIBUTE},
        {"requests": ["nic"], "matchAttribute": "dra.net/numaNode"},
    ]
    assert devices["config"][0]["requests"] == ["gpus"]
    assert devices["config"][0]["opaque"]["parameters"]["kind"] == "GpuConfig"
    validate("shared-gpu", spec)


def test_stack_templates_are_builtins_then_user_templates():
    prod = parse_stack_config({key.split(":", 1)[1]: value for key, value in load_stack_config("prod").items()}, "prod")
    names = list(claim_template_specs(prod.claims))
    assert names[: len(BUILTIN_TEMPLATES)] == list(BUILTIN_TEMPLATES)
    assert names[len(BUILTIN_TEMPLATES) :] == [t.name for t in prod.claims.user_templates]
