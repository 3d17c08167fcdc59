"""Settings that mean nothing without another: set while the one they need is off, each is refused by name.

The Pulumi CLI merges every declared default in, so a key counts as set when its value differs from
its default. Without this, `dcgmExporterVersion` on a stack with `gpuMetrics: false` (or an InfiniBand
fabric no group joins, `sampleRdmaImage` without an InfiniBand group, `allowedDeviceClasses` without a user
template, `gpuProducts` without the `gpu-by-product` template, queue settings without a team, or
`draComputeDomains` without a GB200/GB300-class group) would be read and silently dropped.

`draPluginOutageAccepted` is not among them: whether it acknowledges anything depends on the driver root
the cluster runs now, which only the plan's baseline knows (policy driver-mode-transition), and it stays set
on purpose across the `up`s that recreate the groups it names.
"""

from __future__ import annotations

from collections.abc import Sequence

from components.config.errors import ConfigProblems, config_key, shown
from components.dra_constants import GPU_BY_PRODUCT_TEMPLATE, MULTI_GPU_TEMPLATE
from components.gpu_platforms import GPU_PLATFORMS
from components.input.stack import StackInput, stack_settings
from components.model import DraDriverConfig, GpuNodeGroupConfig

SETTINGS = stack_settings()
# The known platforms ComputeDomains are for: multi-node NVLink, which only Grace-Blackwell systems (GB200, GB300;
# Nebius names them gpu-gb<N>) have (docs/dra-driver.md). The table knows gpu-gb300, and no GB200 platform.
COMPUTE_DOMAIN_PLATFORMS = tuple(platform for platform in GPU_PLATFORMS if platform.startswith("gpu-gb"))


def _refuse_set(settings: StackInput, keys: Sequence[str], why: str, problems: ConfigProblems) -> None:
    for key in keys:
        value = getattr(settings, key)
        if value != SETTINGS[key].default:
            problems.add(config_key(key), f"got {shown(value)}, but {why}; remove it, or turn on what it needs")


def unused_setting_problems(settings: StackInput, problems: ConfigProblems) -> None:
    """Keys that configure a part of the stack that another key turns off."""
    if not settings.gpuMetrics:
        keys = ("dcgmExporterVersion", "dcgmExporterRepository", "gpuMetricsNamespace", "gpuMetricsProfile")
        why = f"{config_key('gpuMetrics')} is false, so the GPU metrics exporter it configures is not installed"
        _refuse_set(settings, (*keys, "gpuMetricsValues"), why, problems)
    if not settings.kubePrometheusStack:
        why = f"{config_key('kubePrometheusStack')} is false, so the stack installs no kube-prometheus-stack"
        _refuse_set(settings, ("kubePrometheusStackVersion", "kubePrometheusStackRepository"), why, problems)
    if not settings.samplePods:
        why = f"{config_key('samplePods')} is false, so no sample pod runs the image"
        _refuse_set(settings, ("sampleGpuImage", "sampleRdmaImage"), why, problems)
    if not settings.userClaimTemplates:
        why = (
            f"{config_key('userClaimTemplates')} is empty, and the classes it lists are ones user templates may "
            "request (the built-in templates use the stack's own DeviceClasses)"
        )
        _refuse_set(settings, ("allowedDeviceClasses",), why, problems)
    if GPU_BY_PRODUCT_TEMPLATE not in settings.builtinClaimTemplates:
        why = f"{config_key('builtinClaimTemplates')} leaves out {GPU_BY_PRODUCT_TEMPLATE}, the template that selects by them"
        _refuse_set(settings, ("gpuProducts",), why, problems)
    if MULTI_GPU_TEMPLATE not in settings.builtinClaimTemplates:
        why = f"{config_key('builtinClaimTemplates')} leaves out {MULTI_GPU_TEMPLATE}, the template it sizes"
        _refuse_set(settings, ("multiGpuCount",), why, problems)


def unused_by_groups_problems(
    settings: StackInput, groups: Sequence[GpuNodeGroupConfig], driver: DraDriverConfig, problems: ConfigProblems
) -> None:
    """Keys that only some GPU group makes useful; `problems` holds them back while a group lost a part."""
    if settings.infinibandFabric and not any(group.infiniband for group in groups):
        problems.add(
            config_key("infinibandFabric"),
            f"got {shown(settings.infinibandFabric)}, but no GPU group sets infiniband: true "
            f"({config_key('gpuNodeGroups')}), so the stack creates no GPU cluster on it; set infiniband: true on an "
            "8-GPU group, or remove infinibandFabric",
        )
    if settings.samplePods and not any(group.infiniband for group in groups):
        why = (
            f"no GPU group sets infiniband: true ({config_key('gpuNodeGroups')}), so the rdma-workload sample pod that "
            "runs it is not created"
        )
        _refuse_set(settings, ("sampleRdmaImage",), why, problems)
    platforms = sorted({group.platform for group in groups})
    if settings.draComputeDomains and not set(platforms) & set(COMPUTE_DOMAIN_PLATFORMS):
        problems.add(
            config_key("draComputeDomains"),
            f"got true, but the stack's GPU groups ({config_key('gpuNodeGroups')}) are on "
            f"{', '.join(platforms) or 'no platform'}, and ComputeDomains "
            f"(multi-node NVLink) are for GB200/GB300-class systems: of the known platforms, "
            f"{', '.join(COMPUTE_DOMAIN_PLATFORMS)} (policies/dra_guardrails/driver_presets.json); add a group on one, "
            "or remove draComputeDomains",
        )
    if not driver.gpu_operator:
        why = "every GPU group has a driversPreset, so the stack installs no GPU Operator"
        _refuse_set(settings, ("gpuOperatorVersion", "gpuOperatorRepository"), why, problems)
    if not driver.network_operator:
        why = "no GPU group without a driversPreset sets infiniband: true, so the stack installs no Network Operator"
        _refuse_set(settings, ("networkOperatorVersion", "networkOperatorRepository"), why, problems)


# What only the cluster the stack creates reads (components/platform.py `_create_cluster`: the mk8s cluster, its
# node groups, their access): in existing-cluster mode (docs/operating.md) none is created, so each is refused.
CLUSTER_ONLY_KEYS = (
    "protect",
    "etcdClusterSize",
    "publicEndpoint",
    "nebiusProfile",
    "nodeServiceAccountId",
    "systemNodePlatform",
    "systemNodePreset",
    "systemNodeCount",
)


def unused_without_a_cluster_problems(settings: StackInput, problems: ConfigProblems) -> None:
    """Keys of the cluster the stack creates, set in existing-cluster mode, where it creates none."""
    if settings.existingClusterKubeconfig:
        why = (
            f"{config_key('existingClusterKubeconfig')} is set, so the stack creates no cluster, node group or "
            "GPU cluster for it to configure (existing-cluster mode)"
        )
        _refuse_set(settings, CLUSTER_ONLY_KEYS, why, problems)
