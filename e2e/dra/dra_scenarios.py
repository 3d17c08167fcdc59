"""The stacks the DRA e2e tests put on a real control plane: dev and prod on each minor, InfiniBand variants of prod.

dev and prod are read from their `Pulumi.<stack>.yaml` exactly as the program reads them
(`load_stack_config`, then `parse_stack_config` on the un-namespaced keys). The variants start from
a real stack's config and change it the way a user would edit the stack file; they have no stack file
of their own, so they are planned through `plan_variant.py` with the config handed over as JSON.

Each scenario runs on the control plane of the Kubernetes minor its stack asks for (kubernetesVersion),
unless it names another: `dev-upgraded` is dev's own stack on a 1.36 control plane, as after an
upgrade of the cluster. A scenario's `kubernetes_version` sets that key over its base's, as a team
creating the stack on that minor writes it: `dev-135`, `prod-135` and `prod-136` change nothing else.

What each scenario expects (which node groups can serve each claim template, where each sample
pod may run) is written here by hand, from the stack files and the README's tables: the tests
compare the real scheduler's decisions with it. A template the plan writes that is not listed
here fails the test, so a new template cannot slip through unchecked.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from components.config import parse_stack_config
from components.config.stack_file import load_stack_config, program_config
from components.dra_constants import NAMESPACE, OPERATOR_DRIVER_ROOT
from components.dra_minors import minor_of
from components.model import StackConfig

# GPU products by Nebius platform: the string the NVIDIA DRA driver publishes as productName, which is
# what nvidia-smi prints (../shared/reference/device-output), and the memory it reports per GPU.
H200 = "NVIDIA H200"
H100 = "NVIDIA H100 80GB HBM3"
PLATFORM_GPUS = {
    "gpu-h200-sxm": (H200, "143771Mi"),
    "gpu-h100-sxm": (H100, "81559Mi"),
}


def _key(name: str) -> str:
    return f"{NAMESPACE}:{name}"


def _groups(config: dict[str, str]) -> list[dict]:
    return json.loads(config[_key("gpuNodeGroups")])


def ib_operator(config: dict[str, str]) -> dict[str, str]:
    """prod with the GPU Operator installing the driver: no group has a driversPreset, draDriverRoot is set.

    samplePods is turned on too, so `rdma-workload` (InfiniBand groups only) is planned and placed.
    """
    groups = _groups(config)
    for group in groups:
        group.pop("driversPreset", None)
    return {
        **config,
        _key("gpuNodeGroups"): json.dumps(groups),
        _key("draDriverRoot"): OPERATOR_DRIVER_ROOT,
        _key("samplePods"): "true",
    }


# README "Example: any GPU, an H200 first", verbatim in the stack file's shape.
GPU_ANY = {
    "name": "gpu-any",
    "requests": [
        {
            "name": "gpu",
            "firstAvailable": [
                {
                    "name": "h200",
                    "deviceClassName": "gpu.nvidia.com",
                    "selectors": [
                        {"cel": {"expression": 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"'}}
                    ],
                },
                {"name": "any", "deviceClassName": "gpu.nvidia.com"},
            ],
        }
    ],
}
# A monitoring claim: every GPU of a node, even those other claims hold (DRAAdminAccess).
GPU_MONITOR = {
    "name": "gpu-monitor",
    "requests": [
        {
            "name": "gpus",
            "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All", "adminAccess": True},
        }
    ],
}
H100_GROUP = {
    "name": "h100",
    "platform": "gpu-h100-sxm",
    "preset": "8gpu-128vcpu-1600gb",
    "fixedNodeCount": 1,
    "labels": {"workload-class": "inference"},
    "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
}


def ib_operator_templates(config: dict[str, str]) -> dict[str, str]:
    """The operator variant plus an H100 group off the fabric and user templates: gpu-any and an adminAccess one.

    gpu-by-product would select the stack's own products, the H100 too; `gpuProducts` pins it to the H200, so that
    the real scheduler shows its CEL selector keeping a claim off the H100 node."""
    config = ib_operator(config)
    templates = json.loads(config[_key("userClaimTemplates")])
    return {
        **config,
        _key("gpuNodeGroups"): json.dumps([*_groups(config), H100_GROUP]),
        _key("userClaimTemplates"): json.dumps([*templates, GPU_ANY, GPU_MONITOR]),
        _key("gpuProducts"): json.dumps([H200]),
    }


# A device taint the real driver publishes: with its NVMLDeviceHealthCheck gate, kubernetes-sigs/dra-driver-nvidia-gpu
# v0.4.1 taints a GPU it cannot monitor with gpu.nvidia.com/unmonitored (policies/dra_minors.json, driverGates).
# The effect is the test's choice: NoSchedule keeps new claims off the GPU without evicting anything.
UNMONITORED_TAINT = {"key": "gpu.nvidia.com/unmonitored", "effect": "NoSchedule"}
# A claim that may land on such a GPU (exactly.tolerations: DRADeviceTaints, on by default from 1.36).
GPU_TOLERATING = {
    "name": "gpu-tolerating",
    "requests": [
        {
            "name": "gpu",
            "exactly": {
                "deviceClassName": "gpu.nvidia.com",
                "tolerations": [{"key": UNMONITORED_TAINT["key"], "operator": "Exists", "effect": "NoSchedule"}],
            },
        }
    ],
}
NEWER_MINOR = "1.36"  # the newest control plane e2e/kube builds (kubernetes-1.36/go.mod)
MIDDLE_MINOR = "1.35"  # kubernetes-1.35/go.mod; the minor new stacks default to


HEALTH_CHECK_VALUES = {"featureGates": {"NVMLDeviceHealthCheck": True}}
KUBERNETES_SIGS_CHART = (
    "dra-driver-nvidia-gpu"  # the default of new stacks; dev's stack file keeps nvidia-dra-driver-gpu
)


def new_driver_tolerating(config: dict[str, str]) -> dict[str, str]:
    """dev as a new stack gets it: the default driver line (Pulumi.yaml: kubernetes-sigs' chart, 0.4.1) with its
    NVMLDeviceHealthCheck gate on, and a user claim template that tolerates an unmonitored GPU (both from 1.36)."""
    return {
        **config,
        _key("draDriverChart"): KUBERNETES_SIGS_CHART,
        _key("draDriverValues"): json.dumps(HEALTH_CHECK_VALUES),
        _key("userClaimTemplates"): json.dumps([GPU_TOLERATING]),
    }


TRAIN, BURST = "h200-train", "h200-burst"
PROD_SERVES = {
    "gpu": {TRAIN, BURST},
    "gpu-by-product": {TRAIN, BURST},
    "multi-gpu": {TRAIN, BURST},
    "ib-network": {TRAIN},
    "rdma-network": {TRAIN},
    "gpu-nic-aligned": {TRAIN},
    "h200-full-node": {TRAIN},
}

DEV_SERVES = {"gpu": {"h200"}, "gpu-by-product": {"h200"}}
DEV_SAMPLE_PODS = {"gpu-workload": {"h200"}}


@dataclass(frozen=True)
class Scenario:
    name: str  # the scenario (the Node name prefix; the stack name planned for a variant)
    base: str  # the Pulumi.<base>.yaml it starts from
    change: Callable[[dict[str, str]], dict[str, str]] | None = None
    kubernetes_version: str | None = None  # set over the base's kubernetesVersion (after `change`)
    serves: Mapping[str, set[str]] = field(default_factory=dict)  # template -> node groups that can serve it
    sample_pods: Mapping[str, set[str]] = field(default_factory=dict)  # sample pod -> node groups it may run on
    control_plane: str | None = None  # the Kubernetes minor it runs on, when not the one its stack asks for

    @property
    def has_stack_file(self) -> bool:
        return self.change is None and self.kubernetes_version is None

    @property
    def stack(self) -> str:
        """The stack planned: the stack file's for an unchanged stack, the scenario's own name for a variant."""
        return self.base if self.has_stack_file else self.name

    @property
    def kube_minor(self) -> str:
        return self.control_plane or minor_of(self.config().cluster.kubernetes_version)

    def raw_config(self) -> dict[str, str]:
        """Full keys -> strings, as the Pulumi CLI hands them to the program."""
        config = load_stack_config(self.base)
        if self.change:
            config = self.change(config)
        if self.kubernetes_version:
            config = {**config, _key("kubernetesVersion"): self.kubernetes_version}
        return config

    def config(self) -> StackConfig:
        return parse_stack_config(program_config(self.raw_config()), self.name)


SCENARIOS = {
    s.name: s
    for s in (
        Scenario("dev", "dev", serves=DEV_SERVES, sample_pods=DEV_SAMPLE_PODS),
        Scenario("dev-upgraded", "dev", serves=DEV_SERVES, sample_pods=DEV_SAMPLE_PODS, control_plane=NEWER_MINOR),
        Scenario("dev-135", "dev", kubernetes_version=MIDDLE_MINOR, serves=DEV_SERVES, sample_pods=DEV_SAMPLE_PODS),
        Scenario(
            "dev-taints",
            "dev",
            new_driver_tolerating,
            kubernetes_version=NEWER_MINOR,
            serves={**DEV_SERVES, "gpu-tolerating": {"h200"}},
            sample_pods=DEV_SAMPLE_PODS,
        ),
        Scenario("prod", "prod", serves=PROD_SERVES),
        Scenario("prod-135", "prod", kubernetes_version=MIDDLE_MINOR, serves=PROD_SERVES),
        Scenario("prod-136", "prod", kubernetes_version=NEWER_MINOR, serves=PROD_SERVES),
        Scenario(
            "ib-operator",
            "prod",
            ib_operator,
            serves=PROD_SERVES,
            sample_pods={"gpu-workload": {TRAIN, BURST}, "rdma-workload": {TRAIN}},
        ),
        Scenario(
            "ib-operator-templates",
            "prod",
            ib_operator_templates,
            serves={
                **PROD_SERVES,
                "gpu": {TRAIN, BURST, "h100"},
                "multi-gpu": {TRAIN, BURST, "h100"},
                "gpu-any": {TRAIN, BURST, "h100"},
                "gpu-monitor": {TRAIN, BURST, "h100"},
            },
            sample_pods={"gpu-workload": {TRAIN, BURST, "h100"}, "rdma-workload": {TRAIN}},
        ),
    )
}
