"""The whole stack's configuration, parsed once into a `StackConfig`.

`__main__.py` hands `parse_stack_config` the raw strings Pulumi gives the program
(structured values arrive as JSON text); everything deeper receives the models and never
reads `pulumi.Config`. Defaults live in `Pulumi.yaml`, which the Pulumi CLI (and the
offline plan) merges in before the program runs, so every key is present here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from components.config.claims import parse_claims_config
from components.config.driver import parse_driver_config
from components.config.errors import ConfigProblems, config_key, shown
from components.config.node_groups import parse_gpu_node_groups
from components.config.raw import RawConfig
from components.model import ClusterConfig, StackConfig, SystemNodeGroupConfig

MIN_KUBERNETES = (1, 34)
VERSION_PATTERN = re.compile(r"^(\d+)\.(\d+)(?:-nebius-node\.(\d+))?$")
PATCH_VERSION_PATTERN = re.compile(r"^(\d+)\.(\d+)\.(\d+)$")
ETCD_SIZES = (1, 3, 5)


def parse_kubernetes_version(version: str | None, problems: ConfigProblems) -> str:
    key = config_key("kubernetesVersion")
    allowed = 'MAJOR.MINOR (for example "1.34") or MAJOR.MINOR-nebius-node.N, at least 1.34'
    if version is None:
        problems.add(key, f"is required; allowed: {allowed}")
        return ""
    patch = PATCH_VERSION_PATTERN.match(version)
    if patch:
        problems.add(
            key,
            f'got {shown(version)}: Nebius mk8s takes no patch version; write "{patch.group(1)}.{patch.group(2)}" (allowed: {allowed})',
        )
        return version
    match = VERSION_PATTERN.match(version)
    if not match:
        problems.add(key, f"got {shown(version)}; allowed: {allowed}")
        return version
    if (int(match.group(1)), int(match.group(2))) < MIN_KUBERNETES:
        hint = " (an unquoted 1.30 in YAML reads as 1.3: quote the version)" if re.match(r"^\d+\.\d$", version) else ""
        problems.add(
            key,
            f'got {shown(version)}: DRA\'s resource.k8s.io/v1 API is GA from Kubernetes 1.34, so the stack needs 1.34 or later; write "1.34"{hint}',
        )
    return version


def parse_stack_config(raw: Mapping[str, str], stack: str) -> StackConfig:
    """Turns the raw config into a `StackConfig`, or raises one error listing every problem."""
    problems = ConfigProblems()
    read = RawConfig(raw, problems)
    cluster = ClusterConfig(
        name=read.text("clusterName") or f"dra-{stack}",
        parent_id=read.text("parentId", required=True) or "",
        subnet_id=read.text("subnetId", required=True) or "",
        kubernetes_version=parse_kubernetes_version(read.text("kubernetesVersion"), problems),
        etcd_cluster_size=read.integer("etcdClusterSize", 1),
        public_endpoint=read.boolean("publicEndpoint"),
        nebius_profile=read.text("nebiusProfile"),
    )
    if cluster.etcd_cluster_size not in ETCD_SIZES:
        problems.add(
            config_key("etcdClusterSize"),
            f"got {cluster.etcd_cluster_size}; allowed: {', '.join(map(str, ETCD_SIZES))} (3 for production)",
        )
    system_nodes = SystemNodeGroupConfig(
        platform=read.text("systemNodePlatform", required=True) or "",
        preset=read.text("systemNodePreset", required=True) or "",
        node_count=read.integer("systemNodeCount", 1),
        boot_disk_gib=read.integer("systemNodeBootDiskGib", 64),
    )
    if system_nodes.platform.startswith("gpu-"):
        problems.add(
            config_key("systemNodePlatform"),
            f"got {shown(system_nodes.platform)}; the system node group runs controllers and needs a CPU platform such as cpu-d3",
        )
    gpu_groups = parse_gpu_node_groups(read.structured("gpuNodeGroups", None), problems)
    fabric = read.text("infinibandFabric")
    for group in gpu_groups:
        if group.infiniband and fabric is None:
            problems.add(
                f"{config_key('gpuNodeGroups')} entry {group.name}",
                f"infiniband is true but {config_key('infinibandFabric')} is not set; set it to the fabric of your GPU platform and region (for example fabric-3)",
            )
    config = StackConfig(
        cluster=cluster,
        system_nodes=system_nodes,
        gpu_node_groups=gpu_groups,
        infiniband_fabric=fabric,
        protect=read.boolean("protect"),
        node_service_account_id=read.text("nodeServiceAccountId"),
        driver=parse_driver_config(read, gpu_groups, problems),
        claims=parse_claims_config(read, gpu_groups, problems),
    )
    problems.raise_if_any()
    return config
