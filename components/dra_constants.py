"""The DRA vocabulary every layer shares: API version, drivers, DeviceClasses, charts, template names, node labels.

This module imports nothing, so the config parsers, the value builders, the components and
the live verifier all spell a class, a chart or a label the same way. The policy pack keeps
its own copies (it cannot import the program); a test compares them with these.
"""

NAMESPACE = "nebius-dra"
# The Pulumi project (Pulumi.yaml's name), whose name the config keys take as their namespace, and every URN names.
PROJECT = NAMESPACE

RESOURCE_API_VERSION = "resource.k8s.io/v1"

# Drivers and the DeviceClasses they serve. gpu.nvidia.com, mig.nvidia.com and vfio.gpu.nvidia.com
# come with the NVIDIA DRA chart (both chart lines); the two network classes are created by
# Nebius on DRA node groups (DRANet). DEVICE_CLASS_CONDITIONS says when each class has devices.
GPU_DRIVER = "gpu.nvidia.com"
NETWORK_DRIVER = "dra.net"
GPU_CLASS = "gpu.nvidia.com"
MIG_CLASS = "mig.nvidia.com"
VFIO_CLASS = "vfio.gpu.nvidia.com"
IB_CLASS = "ib.networking.nebius.ai"
RDMA_CLASS = "rdma.networking.nebius.ai"
NETWORK_CLASSES = (IB_CLASS, RDMA_CLASS)
KNOWN_DEVICE_CLASSES = (GPU_CLASS, MIG_CLASS, VFIO_CLASS, IB_CLASS, RDMA_CLASS)
CLASS_DRIVERS = {
    GPU_CLASS: GPU_DRIVER,
    MIG_CLASS: GPU_DRIVER,
    VFIO_CLASS: GPU_DRIVER,
    IB_CLASS: NETWORK_DRIVER,
    RDMA_CLASS: NETWORK_DRIVER,
}
DEVICE_CLASS_CONDITIONS = {
    GPU_CLASS: "every GPU node, once the NVIDIA DRA driver's kubelet plugin runs there",
    MIG_CLASS: "GPUs with MIG enabled and partitioned (the driver publishes each MIG device)",
    VFIO_CLASS: "the DRA driver's PassthroughSupport feature gate on (draDriverValues featureGates.PassthroughSupport: true)",
    IB_CLASS: "InfiniBand GPU groups (DRANet, managed by Nebius on DRA node groups)",
    RDMA_CLASS: "InfiniBand GPU groups (DRANet, managed by Nebius on DRA node groups)",
}
PASSTHROUGH_GATE = "PassthroughSupport"
# Kubernetes admits a request with adminAccess only in a namespace carrying this label set to "true"
# (k8s.io/api resource/v1 DRAAdminNamespaceLabelKey).
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
PCIE_ROOT_ATTRIBUTE = "resource.kubernetes.io/pcieRoot"
# Removed from the NVIDIA DRA driver's GPU attributes in 25.8.0: a selector on them never matches.
REMOVED_GPU_ATTRIBUTES = ("index", "minor")
EXACT_COUNT, ALL_DEVICES = "ExactCount", "All"

# Built-in ResourceClaimTemplates.
GPU_TEMPLATE = "gpu"
MULTI_GPU_TEMPLATE = "multi-gpu"
GPU_BY_PRODUCT_TEMPLATE = "gpu-by-product"
IB_TEMPLATE = "ib-network"
RDMA_TEMPLATE = "rdma-network"
GPU_NIC_TEMPLATE = "gpu-nic-aligned"
BUILTIN_TEMPLATES = (
    GPU_TEMPLATE,
    MULTI_GPU_TEMPLATE,
    GPU_BY_PRODUCT_TEMPLATE,
    IB_TEMPLATE,
    RDMA_TEMPLATE,
    GPU_NIC_TEMPLATE,
)
NETWORK_TEMPLATES = (IB_TEMPLATE, RDMA_TEMPLATE, GPU_NIC_TEMPLATE)
# The GPU product name (`nvidia-smi`'s name, the DRA driver's `productName`) of each Nebius GPU platform that
# `gpu-by-product` selects by default, as a real device printed it:
#   gpu-h200-sxm: `nvidia-smi -L` on a Nebius H200 VM, driver 580.159.04 ("GPU 0: NVIDIA H200", and the driver's
#     ResourceSlice productName; /work/shared/reference/device-output/nvidia-smi-h200.txt, facts.md).
#   gpu-h100-sxm: /proc/driver/nvidia/gpus/<bus>/information of an H100 SXM, driver 535.129.03 ("Model: NVIDIA
#     H100 80GB HBM3", https://landontclipp.github.io/sysadmin/gpu); nvidia-smi prints the driver's model name.
# A platform not listed has no default product: name its products in nebius-dra:gpuProducts.
GPU_PRODUCTS = {"gpu-h200-sxm": "NVIDIA H200", "gpu-h100-sxm": "NVIDIA H100 80GB HBM3"}
DEFAULT_CLAIM_NAMESPACE = "dra-samples"

# The NVIDIA DRA driver chart: `nvidia-dra-driver-gpu` (last released as 25.12.0) and its
# successor `dra-driver-nvidia-gpu` (0.4.x), which keeps the old object names via nameOverride.
LEGACY_CHART = "nvidia-dra-driver-gpu"
RENAMED_CHART = "dra-driver-nvidia-gpu"
NGC_REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"
KUBERNETES_OCI_REPOSITORY = "oci://registry.k8s.io/dra-driver-nvidia/charts"
RELEASE_NAME = LEGACY_CHART
DEFAULT_DRIVER_NAMESPACE = "nvidia-dra-driver-gpu"
HOST_DRIVER_ROOT = "/"
OPERATOR_DRIVER_ROOT = "/run/nvidia/driver"

GPU_OPERATOR_CHART = "gpu-operator"
NETWORK_OPERATOR_CHART = "network-operator"
GPU_OPERATOR_VERSION = "v26.7.0"
GPU_OPERATOR_NAMESPACE = "gpu-operator"
NETWORK_OPERATOR_NAMESPACE = "nvidia-network-operator"

# Node labels: what the DRA kubelet plugin selects on, and what the stack adds to find its nodes.
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
KUBELET_PLUGIN_LABEL = "nvidia.com/dra-kubelet-plugin"
OPERANDS_OFF_LABEL = "nvidia.com/gpu.deploy.operands"
NODE_GROUP_LABEL = "nebius-dra/node-group"
DRIVER_MODE_LABEL = "nebius-dra/driver-mode"
SYSTEM_ROLE_LABEL = "nebius-dra/role"
RESERVED_GPU_LABELS = {GPU_PRESENT_LABEL: "true", KUBELET_PLUGIN_LABEL: "true"}
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# GPU metrics. NVIDIA's DCGM exporter chart (github.com/NVIDIA/dcgm-exporter, `deployment/`; Helm repository
# from its README). 4.8.3 (image 4.6.0-4.8.3) is the first release whose DRA mode reads resource.k8s.io/v1
# ResourceSlices (NVIDIA/dcgm-exporter#590, fixed by #654 in 4.6.0-4.8.3); 4.8.2 watches only v1beta1.
DCGM_EXPORTER_CHART = "dcgm-exporter"
DCGM_EXPORTER_REPOSITORY = "https://nvidia.github.io/dcgm-exporter/helm-charts"
DCGM_EXPORTER_VERSION = "4.8.3"
DEFAULT_METRICS_NAMESPACE = "gpu-metrics"
# Labels the exporter adds to a GPU's series in DRA mode (internal/pkg/transformation/const.go, 4.6.0-4.8.3).
DCGM_POD_LABEL = "pod"
DCGM_NAMESPACE_LABEL = "namespace"
DCGM_CLAIM_LABEL = "dra_claim_name"
DCGM_CLAIM_NAMESPACE_LABEL = "dra_claim_namespace"
DCGM_DEVICE_LABEL = "dra_device_name"
DCGM_POOL_LABEL = "dra_pool_name"
# Optional Prometheus for clusters that have none (prometheus-community/helm-charts).
KUBE_PROMETHEUS_STACK_CHART = "kube-prometheus-stack"
PROMETHEUS_COMMUNITY_REPOSITORY = "https://prometheus-community.github.io/helm-charts"
KUBE_PROMETHEUS_STACK_VERSION = "88.5.3"
MONITORING_NAMESPACE = "monitoring"
# The Grafana sidecar's default dashboard label (grafana chart 12.11.1 sidecar.dashboards.label/labelValue).
GRAFANA_DASHBOARD_LABEL = "grafana_dashboard"

# Node conditions Nebius sets on mk8s nodes (docs.nebius.com/kubernetes/maintenance/health-checks and
# /kubernetes/maintenance/manage): a GPU fault (nvidia-smi, dcgmi and dmesg checks every five minutes: Xid,
# ECC, InfiniBand, NVLink), boot-disk I/O errors for 30 s or more, and a scheduled maintenance event whose
# message carries the SLA deadline. Auto-repair acts on the first two (and on Ready); the verifier reports all three.
READY_CONDITION = "Ready"
GPU_ERROR_CONDITION = "NebiusGPUError"
BOOT_DISK_ERROR_CONDITION = "NebiusBootDiskIOError"
MAINTENANCE_CONDITION = "NebiusMaintenanceScheduled"
AUTO_REPAIR_CONDITIONS = (GPU_ERROR_CONDITION, BOOT_DISK_ERROR_CONDITION, READY_CONDITION)

# Where a GPU node group's VMs come from: regular pay-as-you-go VMs (Nebius's default reservation policy
# AUTO still uses a suitable capacity block when one is free), reserved capacity (capacity block groups),
# or preemptible VMs at the spot price.
ON_DEMAND_CAPACITY = "on-demand"
RESERVED_CAPACITY = "reserved"
SPOT_CAPACITY = "spot"
CAPACITY_TYPES = (ON_DEMAND_CAPACITY, RESERVED_CAPACITY, SPOT_CAPACITY)
# template.reservation_policy.policy (pulumi-nebius 0.6.73 Mk8sV1NodeGroupTemplateReservationPolicyArgs.policy).
RESERVATION_POLICIES = ("AUTO", "FORBID", "STRICT")
