"""The stack file's shape: every key, as one strict pydantic model (its structured fields: the modules beside).

pydantic checks types, whole-string ASCII patterns, bounds and unknown fields; the parsers
beside this module then check what needs more than one field (modes, collisions, CEL) and
build the frozen models. Each field's `description` is the "allowed" half of its error
message and the text editors show from the published JSON Schema (`stack-file.schema.json`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
)

from components.dra_constants import (
    BUILTIN_TEMPLATES,
    LEGACY_CHART,
    RENAMED_CHART,
)
from components.input.claim_templates import UserClaimTemplateInput
from components.input.fields import (
    ABSOLUTE_PATH_PATTERN,
    CHART_VERSION_PATTERN,
    CPU_PRESET_PATTERN,
    FABRIC_PATTERN,
    GROUP_NAME_PATTERN,
    KUBERNETES_MINORS_TEXT,
    KUBERNETES_VERSION_PATTERN,
    KUBERNETES_VERSION_RULE,
    MAX_AUTO_REPAIR_CONDITIONS,
    MAX_DEVICES_PER_CLAIM,
    NEBIUS_ID_PATTERN,
    PLATFORM_PATTERN,
    PRODUCT_PATTERN,
    PROFILE_PATTERN,
    REPOSITORY_PASSWORD_PATTERN,
    RESOURCE_NAME_PATTERN,
    BootDiskGib,
    ChartRepository,
    ChartVersion,
    DnsSubdomain,
    Image,
    LocalFile,
    Namespace,
    NodeCount,
    RepositoryUsername,
    Shape,
    optional,
    valid_username,
)
from components.input.meaning import Setting
from components.input.node_groups import AutoRepairConditionInput, GpuNodeGroupInput, StrategyInput
from components.input.prices import PriceTableInput
from components.input.queues import QueuesInput
from components.resource_presets import TABLE_NAME as RESOURCE_PRESETS_TABLE

# An enum (not a pattern), so a misspelt name gets its "did you mean" and editors offer the names.
BuiltinTemplateName = Annotated[
    Literal[BUILTIN_TEMPLATES],  # type: ignore[valid-type]
    Field(description=f"allowed: {', '.join(BUILTIN_TEMPLATES)}"),
]
# The minors kubernetesVersion takes, as the docs' tables write them (`1.34`, `1.35` or `1.36`).
_MINORS_IN_CODE = KUBERNETES_MINORS_TEXT.replace('"', "`")
BOOL = Annotated[StrictBool, Field(description="expected true or false")]
OPTIONAL_ID = Annotated[
    StrictStr,
    Field(
        pattern=optional(NEBIUS_ID_PATTERN),
        max_length=255,
        description="expected a Nebius ID such as serviceaccount-e00..., or empty",
    ),
]


class StackInput(Shape):
    """Every key of the stack, named as in `Pulumi.<stack>.yaml` without the `nebius-dra:` namespace.

    Each key's default, README section and meaning are its `Setting`; `python -m tools.config_docs`
    writes them into `Pulumi.yaml` (whose defaults the CLI, or the offline plan, merges in, so a
    key is missing only when it has no default) and into the README's tables. The fields carry no
    pydantic default: the program always receives every key that has one.
    """

    parentId: Annotated[
        StrictStr,
        Field(
            pattern=optional(NEBIUS_ID_PATTERN),
            max_length=63,
            description="expected the ID of a Nebius project, such as project-e00... (empty only with existingClusterKubeconfig)",
        ),
        Setting(
            "Cluster and node keys",
            "Nebius project ID (`project-...`) that owns the cluster and the GPU cluster",
            default="",
            shown_default="(required to create a cluster)",
        ),
    ]
    subnetId: Annotated[
        StrictStr,
        Field(
            pattern=optional(NEBIUS_ID_PATTERN),
            max_length=63,
            description="expected the ID of a VPC subnet, such as vpcsubnet-e00... (empty only with existingClusterKubeconfig)",
        ),
        Setting(
            "Cluster and node keys",
            "VPC subnet (`vpcsubnet-...`) for the control plane and the nodes",
            default="",
            shown_default="(required to create a cluster)",
        ),
    ]
    clusterName: Annotated[
        StrictStr,
        Field(
            pattern=optional(RESOURCE_NAME_PATTERN),
            max_length=63,
            description="expected a Nebius name: at most 63 lowercase letters, digits and '-', starting with a letter and not ending with '-' (no '.'), or empty for dra-<stack>",
        ),
        Setting(
            "Cluster and node keys",
            "name of the mk8s cluster: at most 63 lowercase letters, digits and `-`, starting with a letter, no `.`. Node groups are named `<clusterName>-<group>` (the system group `<clusterName>-system`) and the GPU cluster `<clusterName>-<fabric>`; each of those must fit in 63 characters too",
            default="",
            shown_default="`dra-<stack>`",
        ),
    ]
    kubernetesVersion: Annotated[
        StrictStr,
        Field(
            max_length=32,
            description=KUBERNETES_VERSION_RULE,
            # The program words its refusal itself (components/config/stack.py); editors read the pattern.
            json_schema_extra={"pattern": KUBERNETES_VERSION_PATTERN},
        ),
        Setting(
            "Cluster and node keys",
            f"`MAJOR.MINOR` or `MAJOR.MINOR-nebius-node.N` of a minor the stack has DRA rules for, {_MINORS_IN_CODE} "
            "(the rows of [`policies/dra_minors.json`](policies/dra_minors.json): each minor's DRA feature gates and the fields they guard; "
            "another minor, older or newer, is refused until its row is added), quoted; 1.34 is the floor: `resource.k8s.io/v1` is GA there. New stacks default to 1.35, the minor Nebius's solutions library moved to (its driver-preset table, `policies/dra_guardrails/driver_presets.json`, has rows for 1.35 and 1.36 and none for 1.34); 1.36 turns on the DRA features of [the table by minor](#your-own-templates). dev and prod stay on 1.34, set in their stack files: moving a live stack's minor upgrades the control plane, then every node group, and Nebius replaces each group's nodes by its roll-out strategy (one 8-GPU node at a time in prod), so plan it (`make plan STACK=prod` compares with the last commit and lists every group replaced, with batches and duration; a skipped minor such as 1.34 to 1.36 is refused) and do it on dev first; a patch version (`1.34.1`) is refused. The control plane gets `MAJOR.MINOR`; every node group (system and GPU) gets the whole value, `-nebius-node.N` included, so changing it upgrades the node groups too, after the cluster (`components/values/node_groups.py`)",
            default="1.35",
            shown_default="`1.35`",
        ),
    ]
    etcdClusterSize: Annotated[
        Literal[1, 3],
        Field(description="allowed: 1 or 3 (3 for production); the Nebius API takes no other size"),
        Setting(
            "Cluster and node keys", "1 or 3 etcd members (3 in prod); the Nebius API takes no other size", default=1
        ),
    ]
    publicEndpoint: Annotated[
        BOOL,
        Setting(
            "Cluster and node keys", "public control plane endpoint; the kubeconfig uses it when present", default=True
        ),
    ]
    nebiusProfile: Annotated[
        StrictStr,
        Field(
            pattern=optional(PROFILE_PATTERN),
            max_length=63,
            description="expected a nebius CLI profile name (letters, digits, '.', '_', '-'), or empty",
        ),
        Setting(
            "Cluster and node keys",
            "`nebius` CLI profile for the kubeconfig's exec plugin (`--profile`)",
            default="",
            shown_default="(CLI default)",
        ),
    ]
    protect: Annotated[
        BOOL,
        Setting(
            "Cluster and node keys",
            "deletion protection for the cluster, GPU cluster and GPU node groups",
            default=False,
        ),
    ]
    nodeServiceAccountId: Annotated[
        OPTIONAL_ID,
        Setting(
            "Cluster and node keys",
            "service account (`serviceaccount-...`) attached to every node",
            default="",
            shown_default="(none)",
        ),
    ]
    systemNodePlatform: Annotated[
        StrictStr,
        Field(pattern=PLATFORM_PATTERN, max_length=63, description="expected a CPU platform such as cpu-d3"),
        Setting(
            "Cluster and node keys",
            "CPU platform of the system node group: one the price table (`prices/nebius.yaml` or `priceOverrides`) prices (a `gpu-*` platform is refused)",
            default="cpu-d3",
        ),
    ]
    systemNodePreset: Annotated[
        StrictStr,
        Field(
            pattern=CPU_PRESET_PATTERN,
            max_length=63,
            description="expected a CPU preset <C>vcpu-<M>gb, C and M from 1, such as 4vcpu-16gb",
        ),
        Setting(
            "Cluster and node keys",
            "CPU preset of the system nodes (`<N>vcpu-<M>gb`): one Nebius offers on `systemNodePlatform`, as its row of "
            f"[`{RESOURCE_PRESETS_TABLE}`]({RESOURCE_PRESETS_TABLE}) lists them (another, or any on a platform without a row, is refused)",
            default="4vcpu-16gb",
        ),
    ]
    systemNodeCount: Annotated[
        NodeCount, Setting("Cluster and node keys", "number of system nodes, 1 to 100", default=2)
    ]
    systemNodeBootDiskGib: Annotated[
        BootDiskGib, Setting("Cluster and node keys", "boot disk of each system node, GiB, 64 to 65536", default=64)
    ]
    systemNodeStrategy: Annotated[
        StrategyInput,
        Field(description="expected a map {maxSurge, maxUnavailable, drainTimeout}"),
        Setting(
            "Cluster and node keys",
            "roll-out strategy of the system group, always sent to Nebius; fields as in a GPU group's `strategy` ([Running GPU node groups](#running-gpu-node-groups-roll-outs-repair-reservations-spot)). A field left out keeps its default here",
            default={"maxSurge": 1, "maxUnavailable": 0, "drainTimeout": "10m"},
            shown_default="`{maxSurge: 1, maxUnavailable: 0, drainTimeout: 10m}`",
        ),
    ]
    systemNodeAutoRepair: Annotated[
        list[AutoRepairConditionInput],
        Field(
            max_length=MAX_AUTO_REPAIR_CONDITIONS,
            description="expected a list of {type, status, timeout} or {type, status, disabled: true}",
        ),
        Setting(
            "Cluster and node keys",
            "auto-repair rules of the system group on top of Nebius's defaults, as in a GPU group's `autoRepair`",
            default=[],
        ),
    ]
    gpuNodeGroups: Annotated[
        list[GpuNodeGroupInput],
        Field(min_length=1, description="expected a non-empty list of GPU node groups in the stack file"),
        Setting(
            "Cluster and node keys",
            "the GPU node groups, all DRA-enabled; at least one; fields below",
            shown_default="(required)",
        ),
    ]
    infinibandFabric: Annotated[
        StrictStr,
        Field(
            pattern=optional(FABRIC_PATTERN),
            max_length=63,
            description="expected an InfiniBand fabric such as fabric-3, or empty",
        ),
        Setting(
            "Cluster and node keys",
            "InfiniBand fabric of the GPU cluster (for example `fabric-3`); required when a group sets `infiniband: true`",
            default="",
            shown_default="(none)",
        ),
    ]
    draDriverChart: Annotated[
        Literal["nvidia-dra-driver-gpu", "dra-driver-nvidia-gpu"],
        Field(description=f"allowed: {RENAMED_CHART} (default) or {LEGACY_CHART}"),
        Setting(
            "DRA driver keys",
            "chart line: `dra-driver-nvidia-gpu` (the default for a stack file that does not set it) or `nvidia-dra-driver-gpu` (dev and prod set it: they run 25.12.0)",
            default="dra-driver-nvidia-gpu",
        ),
    ]
    draDriverVersion: Annotated[
        StrictStr,
        Field(
            pattern=optional(CHART_VERSION_PATTERN),
            max_length=32,
            description="expected an exact chart version, or empty for the chart line's default",
        ),
        Setting(
            "DRA driver keys",
            "exact version: `25.12.0` for the first line; `0.4.x` from `0.4.1` (the default) for the second. `0.4.0` is refused: with `nameOverride` it renders duplicate label keys ([kubernetes-sigs/dra-driver-nvidia-gpu#1184](https://github.com/kubernetes-sigs/dra-driver-nvidia-gpu/issues/1184), fixed in 0.4.1)",
            default="",
            shown_default="per chart line",
        ),
    ]
    draDriverRepository: Annotated[
        ChartRepository,
        Setting(
            "DRA driver keys",
            "`oci://registry.k8s.io/dra-driver-nvidia/charts` (the default for `dra-driver-nvidia-gpu`) or `https://helm.ngc.nvidia.com/nvidia` (the default and only upstream for `nvidia-dra-driver-gpu`); or any mirror (`https://`, `http://` or `oci://`, no user or password in the URL nor a token in a host label or a path segment (`https://dl.cloudsmith.io/<token>/...`): it would be stored in clear; a login goes in [`chartRepositoryUsername` and `chartRepositoryPassword`](#charts-from-a-mirror-or-a-private-repository))",
            default="",
            shown_default="per chart line",
        ),
    ]
    draDriverNamespace: Annotated[
        Namespace,
        Setting(
            "DRA driver keys",
            "namespace of the release (a DNS label), created if missing; a namespace Kubernetes owns (`default`, `kube-system`, `kube-public`, `kube-node-lease`) or one starting with `kube-` (the prefix Kubernetes reserves) is refused",
            default="nvidia-dra-driver-gpu",
        ),
    ]
    draDriverRoot: Annotated[
        StrictStr,
        Field(
            pattern=optional(ABSOLUTE_PATH_PATTERN),
            max_length=255,
            description="expected an absolute path on the node, such as / or /run/nvidia/driver, or empty",
        ),
        Setting(
            "DRA driver keys",
            "`nvidiaDriverRoot`, an absolute path: `/` with presets, `/run/nvidia/driver` with the GPU Operator; required when modes are mixed",
            default="",
            shown_default="by driver mode",
        ),
    ]
    draPluginOutageAccepted: Annotated[
        list[
            Annotated[
                StrictStr,
                Field(
                    pattern=GROUP_NAME_PATTERN,
                    max_length=32,
                    description="expected the name of a GPU group of gpuNodeGroups",
                ),
            ]
        ],
        Setting(
            "DRA driver keys",
            "GPU groups whose DRA kubelet plugin you accept to lose when `draDriverRoot` moves away from where their driver lives (a change between driver modes, [offline plan](docs/offline-plan.md#driver-mode-changes)); without it the plan's mandatory finding `driver-mode-transition` blocks such a change. Remove it once those groups are recreated",
            default=[],
        ),
    ]
    draComputeDomains: Annotated[
        BOOL,
        Setting(
            "DRA driver keys",
            "ComputeDomains for GB200/GB300-class systems (refused unless a GPU group is on one, such as gpu-gb300); "
            "the controller then runs on the system nodes",
            default=False,
        ),
    ]
    draDriverValues: Annotated[
        dict[StrictStr, Any],
        Field(description="expected a map of chart values"),
        Setting(
            "DRA driver keys",
            "extra chart values, deep-merged last; guarded values and keys the chart does not read are refused. It may be a secret (as `existingClusterKubeconfig` must be); the release's Helm values are then a secret as a whole. Set in plain text, a value of a credential's shape (a URL's userinfo, a token) is refused: set such a value as a secret, `pulumi config set --path --secret 'nebius-dra:draDriverValues.<path>' <value>`",
            default={},
        ),
    ]
    gpuOperatorVersion: Annotated[
        ChartVersion,
        Setting(
            "DRA driver keys",
            "exact GPU Operator chart version, installed only when a group has no `driversPreset`. Until issue 26 the default was `v25.10.1`: a stack in GPU Operator mode that relied on it upgrades the Operator on its next `pulumi up`; set `v25.10.1` to keep it",
            default="v26.7.0",
        ),
    ]
    gpuOperatorRepository: Annotated[
        ChartRepository,
        Setting(
            "DRA driver keys",
            "repository or mirror of the GPU Operator chart, as for `draDriverRepository`",
            default="",
            shown_default="NGC",
        ),
    ]
    networkOperatorVersion: Annotated[
        ChartVersion,
        Setting(
            "DRA driver keys",
            "exact Network Operator chart version, installed only when such a group uses InfiniBand",
            default="25.7.0",
        ),
    ]
    networkOperatorRepository: Annotated[
        ChartRepository,
        Setting(
            "DRA driver keys",
            "repository or mirror of the Network Operator chart, as for `draDriverRepository`",
            default="",
            shown_default="NGC",
        ),
    ]
    claimNamespace: Annotated[
        Namespace,
        Setting(
            "Claim and sample keys",
            'namespace of the templates and sample pods (a DNS label). The stack creates it and deletes it with the stack, so a namespace Kubernetes owns (`default`, `kube-system`, `kube-public`, `kube-node-lease`), one starting with `kube-` (the prefix Kubernetes reserves) or a release of the stack uses (`draDriverNamespace`, `gpu-operator` and `nvidia-network-operator` where it installs them, `monitoring` with `kubePrometheusStack`, the `queues` namespace of Kueue) is refused. Labelled `resource.kubernetes.io/admin-access: "true"` when a user template uses `adminAccess`',
            default="dra-samples",
        ),
    ]
    builtinClaimTemplates: Annotated[
        list[BuiltinTemplateName],
        Setting(
            "Claim and sample keys",
            "built-in templates to create: `gpu`, `multi-gpu`, `gpu-by-product`, `ib-network`, `rdma-network`, `gpu-nic-aligned`",
            default=["gpu", "multi-gpu", "gpu-by-product", "ib-network", "rdma-network", "gpu-nic-aligned"],
            shown_default="all six",
        ),
    ]
    multiGpuCount: Annotated[
        StrictInt,
        Field(
            ge=0,
            le=MAX_DEVICES_PER_CLAIM,
            description=f"expected 0 (every GPU of the largest node) or a whole number from 2 to {MAX_DEVICES_PER_CLAIM}",
        ),
        Setting(
            "Claim and sample keys",
            "GPUs in `multi-gpu`, 2 up to the largest node's (at most 32); `0` means every GPU of the largest node",
            default=0,
        ),
    ]
    gpuProducts: Annotated[
        list[
            Annotated[
                StrictStr,
                Field(
                    pattern=PRODUCT_PATTERN,
                    max_length=128,
                    description='expected a GPU product name as nvidia-smi prints it, for example "NVIDIA H200"',
                ),
            ]
        ],
        Field(description="expected a list of GPU product names"),
        Setting(
            "Claim and sample keys",
            "product names `gpu-by-product` accepts, as `nvidia-smi` prints them; empty (the default): the products of the stack's own GPU platforms (`NVIDIA H200` for `gpu-h200-sxm`, `NVIDIA H100 80GB HBM3` for `gpu-h100-sxm`; `GPU_PRODUCTS` in `components/dra_constants.py`), and without a known one the template is not created. A list that no platform of the stack serves is refused, and so is a list while `builtinClaimTemplates` leaves out `gpu-by-product`",
            default=[],
            shown_default="the stack's products",
        ),
    ]
    samplePods: Annotated[
        BOOL,
        Setting(
            "Claim and sample keys",
            "create `gpu-workload` and, with InfiniBand, `rdma-workload`",
            default=False,
            shown_default="`false` (dev: `true`)",
        ),
    ]
    sampleGpuImage: Annotated[
        Image,
        Setting(
            "Claim and sample keys",
            "image of `gpu-workload`: has `nvidia-smi`, pinned tag or digest",
            default="nvidia/cuda:13.1.1-runtime-ubuntu24.04",
        ),
    ]
    sampleRdmaImage: Annotated[
        Image,
        Setting(
            "Claim and sample keys",
            "image of `rdma-workload`: has your RDMA tools, pinned tag or digest. Needs `samplePods` and a GPU group with `infiniband: true`",
            default="nvcr.io/nvidia/pytorch:25.01-py3",
        ),
    ]
    userClaimTemplates: Annotated[
        list[UserClaimTemplateInput],
        Setting(
            "Claim and sample keys",
            "your templates, in the v1 shape of [Your own templates](#your-own-templates)",
            default=[],
        ),
    ]
    allowedDeviceClasses: Annotated[
        list[DnsSubdomain],
        Setting(
            "Claim and sample keys",
            "extra DeviceClasses (installed by other drivers) user templates may request, besides the [five the stack knows](#deviceclasses). Needs `userClaimTemplates`",
            default=[],
        ),
    ]
    existingClusterKubeconfig: Annotated[
        StrictStr,
        Field(
            max_length=1 << 20,
            description="expected the kubeconfig (YAML text) of a cluster that already exists, set as a secret, or empty",
        ),
        Setting(
            "Cluster and node keys",
            "[existing-cluster mode](#existing-cluster-mode): the kubeconfig of a cluster the stack does not create, set with `pulumi config set --secret`; a plain value is refused, and its text is never quoted in a message",
            default="",
            shown_type="string, secret",
        ),
    ]
    gpuMetrics: Annotated[
        BOOL,
        Setting(
            "GPU metrics keys",
            "install the DCGM exporter (chart `dcgm-exporter`) in DRA mode on every GPU node, and the dashboard ConfigMap",
            default=True,
        ),
    ]
    dcgmExporterVersion: Annotated[
        ChartVersion,
        Setting(
            "GPU metrics keys",
            "exact chart version, `4.8.x` from `4.8.3`: older charts' DRA mode watches only `resource.k8s.io/v1beta1` ResourceSlices ([NVIDIA/dcgm-exporter#590](https://github.com/NVIDIA/dcgm-exporter/issues/590))",
            default="4.8.3",
        ),
    ]
    dcgmExporterRepository: Annotated[
        ChartRepository,
        Setting(
            "GPU metrics keys",
            "repository or mirror of the dcgm-exporter chart (default `https://nvidia.github.io/dcgm-exporter/helm-charts`), as for `draDriverRepository`",
            default="",
            shown_default="NVIDIA's",
        ),
    ]
    gpuMetricsNamespace: Annotated[
        Namespace,
        Setting(
            "GPU metrics keys",
            "namespace of the exporter and the dashboard (a DNS label), created if missing; a namespace Kubernetes owns or reserves (`kube-*`) or another release of the stack (or `claimNamespace`) uses is refused, because the chart names its ConfigMap and Role without the release name",
            default="gpu-metrics",
        ),
    ]
    gpuMetricsProfile: Annotated[
        Literal["", "full", "basic"],
        Field(
            description="allowed: full (DCGM profiling fields on), basic (no DCGM_FI_PROF_* fields), or empty to choose by the GPU groups' platforms"
        ),
        Setting(
            "GPU metrics keys",
            "`full` (DCGM profiling fields `DCGM_FI_PROF_*` on) or `basic` (off); empty picks `basic` when any GPU group is an L40S platform (`gpu-l40s-*`), `full` otherwise",
            default="",
            shown_default="by platform",
        ),
    ]
    gpuMetricsValues: Annotated[
        dict[StrictStr, Any],
        Field(description="expected a map of chart values"),
        Setting(
            "GPU metrics keys",
            "extra chart values, deep-merged last (for example `resources`, `runtimeClassName`); the guarded values and the [refusals below](#gpu-metrics) (keys the chart does not read among them) are refused. Never a secret, so a value of a credential's shape (a URL's userinfo, a token) is refused too",
            default={},
        ),
    ]
    prometheusServiceMonitor: Annotated[
        BOOL,
        Setting(
            "GPU metrics keys",
            "your cluster has the Prometheus Operator's CRDs: the exporter release renders a `monitoring.coreos.com/v1` ServiceMonitor. Needs `gpuMetrics`",
            default=False,
        ),
    ]
    kubePrometheusStack: Annotated[
        BOOL,
        Setting(
            "GPU metrics keys",
            "also install kube-prometheus-stack in `monitoring`, its controllers on the system nodes; the exporter's ServiceMonitor is then on. Needs `gpuMetrics`",
            default=False,
        ),
    ]
    kubePrometheusStackVersion: Annotated[
        ChartVersion,
        Setting(
            "GPU metrics keys",
            "exact chart version, `88.5.x` from `88.5.3` (the release whose values the stack's keys were checked against)",
            default="88.5.3",
        ),
    ]
    kubePrometheusStackRepository: Annotated[
        ChartRepository,
        Setting(
            "GPU metrics keys",
            "repository or mirror of the kube-prometheus-stack chart (default `https://prometheus-community.github.io/helm-charts`), as for `draDriverRepository`",
            default="",
            shown_default="prometheus-community's",
        ),
    ]
    chartRepositoryUsername: Annotated[
        RepositoryUsername,
        Setting(
            "Chart repository keys",
            "user of the [private repository or registry](#charts-from-a-mirror-or-a-private-repository) the repository keys name (Helm's `username`, basic authentication), plain or a secret; sent to every repository the stack names and to no upstream default. Needs `chartRepositoryPassword`",
            default="",
        ),
    ]
    chartRepositoryPassword: Annotated[
        StrictStr,
        Field(
            pattern=optional(REPOSITORY_PASSWORD_PATTERN),
            max_length=4096,
            description="expected the repository's password or token in printable ASCII (no control character, RFC "
            "7617), set as a secret, or empty",
        ),
        Setting(
            "Chart repository keys",
            "its password or token (Helm's `password`), set with `pulumi config set --secret`; a plain value is refused, and it is never quoted in a message. The releases receive it as a Pulumi secret. Needs `chartRepositoryUsername`",
            default="",
            shown_type="string, secret",
        ),
    ]
    chartRepositoryCaFile: Annotated[
        LocalFile,
        Setting(
            "Chart repository keys",
            "CA bundle (PEM) that signs the repository's TLS certificate (Helm's `caFile`), a file's absolute path on the machine that runs `pulumi`: at most 255 characters, ASCII letters, digits, `.`, `_`, `-` and `/` (no space), not ending in `/`, `.` or `..`",
            default="",
        ),
    ]
    chartRepositoryCertFile: Annotated[
        LocalFile,
        Setting(
            "Chart repository keys",
            "client certificate (PEM) for a repository that asks for one (Helm's `certFile`), a file's absolute path as for `chartRepositoryCaFile`. Needs `chartRepositoryKeyFile`",
            default="",
        ),
    ]
    chartRepositoryKeyFile: Annotated[
        LocalFile,
        Setting(
            "Chart repository keys",
            "the client certificate's private key (Helm's `keyFile`), a file's absolute path as for `chartRepositoryCaFile`. Needs `chartRepositoryCertFile`",
            default="",
        ),
    ]
    queues: Annotated[
        QueuesInput,
        Field(
            description="expected a map {teams: [{name, namespace?, localQueue?, cohort?, quotas: [{group, gpus, "
            "borrowingLimit?}]}], deviceClasses?, claimTemplates?, namespace?, repository?, featureGates?}"
        ),
        Setting(
            "Queue keys",
            "GPU quotas per team, enforced by Kueue v0.17.0, installed only when `teams` is not empty: `teams: [{name, namespace?, localQueue?, cohort?, quotas: [{group, gpus, borrowingLimit?}]}]`, `deviceClasses?` (counted as GPUs: `gpu.nvidia.com`, the default, and `vfio.gpu.nvidia.com`), `claimTemplates?` (the templates each team namespace gets; default every one Kueue can count), `namespace?` (`kueue-system`), `repository?` (a mirror of `oci://registry.k8s.io/kueue/charts`), `featureGates?` (Kueue gate: true or false). Refused: a quota over what its group holds, a group that does not exist, borrowing without a cohort, two teams in one namespace, a team's or Kueue's namespace that Kubernetes owns or reserves (`kube-*`) or another release of the stack or `claimNamespace` uses, settings without teams, a template Kueue cannot count (the reason is named)",
            default={},
        ),
    ]
    priceOverrides: Annotated[
        PriceTableInput,
        Field(
            description="expected a map {gpu?: [{platform, presets, onDemand: {usdPerGpuHour, source, date}, spot?, "
            "note?}], cpu?: [{platform, onDemand: {usdPerVcpuHour, usdPerGibHour, source, date}, spot?, note?}]}"
        ),
        Setting(
            "Cost keys",
            "prices for this stack's estimate that replace or add to [`prices/nebius.yaml`](prices/nebius.yaml), in the same shape (`gpu:` and `cpu:` lists). A GPU entry wins for its platform and listed presets, a CPU entry for its platform. Every price needs a `source` (a URL, or a reference such as a contract number) and a quoted `date` (`\"YYYY-MM-DD\"`); an entry may add a `note` (how the figure was read) and a `doubtful` (why it is not to be trusted). The cost report and the plan print each price's `source` and `date`, and an entry's `doubtful` beside every use of it; a `note` is printed nowhere, it stays in the file for its readers. Each of the three is refused, shown by its shape and never quoted, when it may hold a credential: in a `source`, a `%`-encoding, `=`, `?`, `;`, `\\`, a `:` other than a URL's `scheme://` and port, an `@` or `&` in a URL, or a `#` other than a URL's fragment naming a place in the page (such a fragment, `#gpu`, is taken; a reference holds no `:`: `contract NB-2026-17`, not `contract: NB-2026-17`, and may hold `@`, `&` and `#`: `H100 & H200, see @nebius`); in a `note` or `doubtful`, which are prose and may hold `:`, `;` and the others, a `%`-encoding, and those marks only inside a URL in it; in each, a token-shaped word (16 or more letters and digits with both cases and a digit, or 32 or more hex digits; `nvidia2024mirror` is none) or a word the redactor hides (`Bearer ...`, `token ...`). Refused too: an entry that prices no node of the stack (a preset no GPU group runs, a CPU platform other than `systemNodePlatform`, a `spot` rate no spot group of the platform and preset uses: the system nodes are never spot). `currency` is `USD`, the only one. Nothing here reaches Nebius",
            default={},
        ),
    ]


# Keys whose values may be set as secrets (`pulumi config set --secret`, or `secure:` in the stack
# file): their values reach only Helm values or Helm's repository options, which the stack then marks secret.
SECRET_CAPABLE_KEYS = (
    "draDriverValues",
    "existingClusterKubeconfig",
    "chartRepositoryUsername",
    "chartRepositoryPassword",
)
# Keys whose values are credentials whatever form they are given in: no message quotes any leaf of them.
SECRET_ONLY_KEYS = ("existingClusterKubeconfig", "chartRepositoryPassword")


def credentials_in(key: str, value: Any) -> tuple[Any, ...]:
    """What of a key's value (`key` without its namespace) no message may quote, set in plain text or not: all of a
    secret-only key's, and all of a username the model refuses. A refused username is often a user and a password
    pasted together: after a `:` (RFC 7617 section 2: a user-id never holds one; the user-id, a colon and the
    password is what that scheme sends), a blank, or a look-alike colon (U+A789, U+FF1A) that no rule can list whole."""
    if key in SECRET_ONLY_KEYS:
        return (value,)
    if key == "chartRepositoryUsername" and not valid_username(value):
        return (value,)
    return ()


def stack_settings() -> dict[str, Setting]:
    """Every key's Setting, in the order StackInput declares them; every key must have one."""
    settings = {}
    for name, info in StackInput.model_fields.items():
        (setting,) = [item for item in info.metadata if isinstance(item, Setting)]
        settings[name] = setting
    return settings
