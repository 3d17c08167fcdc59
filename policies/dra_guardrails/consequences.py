"""What a change to each setting does on Nebius and in the cluster: the one table the plan, the cost and the pack read.

`pulumi preview` shows most of these changes as an `update`, the same word for a new label and for
a new Kubernetes minor that replaces every GPU node. What really happens is decided by Nebius
(which node template fields roll a group's nodes out, which fields are versions), by Pulumi (a new
logical name is another resource), by the Kubernetes API server (a claim template's spec is
immutable) and by Helm (a chart's `crds/` folder is installed once, never upgraded). Each row names
the stack setting(s), the registered field(s) that carry them, the effect, and its source; nothing
else in the project decides whether a change is disruptive (`consequence_of`).

It lives in the policy pack's package because the pack imports nothing from the program (planned.py);
`tests/policies/test_consequences.py` compares each row with its source where an installed SDK, a vendored
chart or the program's own registrations can show it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from .planned import CLUSTER_TYPE, NODE_GROUP_TYPE, POD_TYPE

CLAIM_TEMPLATE_TYPE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
HELM_RELEASE_TYPE = "kubernetes:helm.sh/v3:Release"
NAMESPACE_TYPE = "kubernetes:core/v1:Namespace"
KUBERNETES_PROVIDER_TYPE = "pulumi:providers:kubernetes"
# The Kueue objects of `queues` (components/kueue.py registers them as CustomResources of kueue.x-k8s.io/v1beta2).
KUEUE_TYPE_PREFIX = "kubernetes:kueue.x-k8s.io/v1beta2:"
CLUSTER_QUEUE_TYPE = f"{KUEUE_TYPE_PREFIX}ClusterQueue"
LOCAL_QUEUE_TYPE = f"{KUEUE_TYPE_PREFIX}LocalQueue"
RESOURCE_FLAVOR_TYPE = f"{KUEUE_TYPE_PREFIX}ResourceFlavor"
# What a setting reaches when it changes nothing deployed: the program's config checks, the plan, the cost, the pack.
NOTHING_DEPLOYED = "(nothing deployed: the config checks, the plan, the cost or the pack read it)"

NEBIUS_SDK = (
    "pulumi-nebius 0.6.73 (the installed SDK's docstrings, bridged from nebius/terraform-provider-nebius 0.6.73)"
)
NODE_GROUP_DOCS = "https://docs.nebius.com/terraform-provider/reference/resources/mk8s_v1_node_group"
SKEW_POLICY = "https://kubernetes.io/releases/version-skew-policy/"
HELM_CRDS = "https://helm.sh/docs/chart_best_practices/custom_resource_definitions/"
PROTECT_DOCS = (
    "Pulumi's protect option (https://www.pulumi.com/docs/iac/concepts/options/protect/): \"A protected resource "
    "cannot be deleted directly, and it will be an error to do a Pulumi deployment which tries to delete a protected "
    'resource for any reason"'
)
PULUMI_NAMES = "https://www.pulumi.com/docs/iac/concepts/resources/names/"
DELETE_BEFORE_REPLACE = "https://www.pulumi.com/docs/iac/concepts/options/deletebeforereplace/"
# The page that says when the engine deletes an unregistered resource (the older URL of how-pulumi-works).
HOW_PULUMI_WORKS = "https://www.pulumi.com/docs/reference/how/"
NEBIUS_API = "nebius/api (https://github.com/nebius/api) at 24bd010d"
CLUSTER_PROTO = f"{NEBIUS_API} nebius/mk8s/v1/cluster.proto ControlPlaneSpec"
KUEUE_SOURCE = "sigs.k8s.io/kueue v0.17.0 (the Go module the stack's Kueue is built from)"
CLUSTER_QUEUE_DOCS = "https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/"
LOCAL_QUEUE_DOCS = "https://kueue.sigs.k8s.io/docs/concepts/local_queue/"
RESOURCE_FLAVOR_DOCS = "https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/"
# What the workload controller does to a workload whose queue is gone: an admitted one is evicted only by a stopPolicy
# HoldAndDrain (the stack sets none), a pending one is marked inadmissible.
KUEUE_WORKLOADS = (
    f"{KUEUE_SOURCE} pkg/controller/core/workload_controller.go reconcileOnLocalQueueActiveState and "
    "reconcileOnClusterQueueActiveState: an admitted workload is evicted only when the queue's stopPolicy is "
    'HoldAndDrain; one not admitted gets WorkloadInadmissible ("LocalQueue <name> doesn\'t exist", "ClusterQueue '
    '<name> is terminating or missing")'
)
CLAIM_TEMPLATE_API = (
    "Kubernetes API reference, resource.k8s.io/v1 ResourceClaimTemplate.spec "
    '(https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/resource-claim-template-v1/): "This '
    "field is immutable. A ResourceClaim will get created by the control plane for a Pod when needed and then not "
    'get updated anymore."'
)


class Effect(Enum):
    """How far a change reaches, from harmless to destructive."""

    NOTHING = "nothing deployed changes"
    IN_PLACE = "in place"
    NEW_NODES_ONLY = "reaches only new nodes"
    HELM_RESTART = "Helm upgrade restarts the release's pods"
    CRDS_NOT_UPDATED = "CRDs Helm will not update"
    ROLLING_REPLACE = "nodes replaced in a rolling update under the group's strategy"
    MINOR_UPGRADE = "cluster minor upgrade: control plane, then every node group, nodes replaced"
    # The API server refuses the update (an immutable field of a custom resource Pulumi patches): `pulumi up` fails.
    UPDATE_REFUSED = "refused by the API server: `pulumi up` fails updating it"
    DELETE_CREATE = "resource deleted and created"

    @property
    def replaces_nodes(self) -> bool:
        return self in (Effect.ROLLING_REPLACE, Effect.MINOR_UPGRADE, Effect.DELETE_CREATE)


@dataclass(frozen=True)
class Consequence:
    """One row: a change to `settings` (stack keys) reaches the `fields` of `resource_type` and does `does`."""

    settings: tuple[str, ...]
    resource_type: str
    fields: tuple[str, ...]
    effect: Effect
    does: str
    source: str

    def matches(self, resource_type: str, path: str) -> bool:
        return resource_type == self.resource_type and any(
            path == field or path.startswith(f"{field}.") or path.startswith(f"{field}[") for field in self.fields
        )


GROUP = "gpuNodeGroups[]"
ROLL_OUT = (
    f'{NEBIUS_SDK}, Mk8sV1NodeGroupArgs.template: "If not written opposite a NodeTemplate field update will cause '
    f'NodeGroup roll-out according NodeGroupDeploymentStrategy" ({NODE_GROUP_DOCS})'
)
NOT_ROLLED_OUT = (
    f"{NEBIUS_SDK}, Mk8sV1NodeGroupTemplateMetadataArgs.labels and Mk8sV1NodeGroupTemplateArgs.taints: "
    f'"Field change will NOT trigger NodeGroup roll out"; only nodes created afterwards get the new values ({NODE_GROUP_DOCS})'
)

CONSEQUENCES: tuple[Consequence, ...] = (
    Consequence(
        ("kubernetesVersion",),
        CLUSTER_TYPE,
        ("controlPlane.version",),
        Effect.MINOR_UPGRADE,
        "the control plane is upgraded first, then each node group; one minor at a time, never down",
        f"{NEBIUS_SDK}, Mk8sV1ClusterControlPlaneArgs.version and Mk8sV1NodeGroupArgs.version (a node group defaults "
        f"to the control plane's <major>.<minor>); Kubernetes version skew policy ({SKEW_POLICY}): kubelet never newer "
        "than kube-apiserver, and the control plane moves one minor at a time",
    ),
    Consequence(
        ("parentId",),
        CLUSTER_TYPE,
        ("parentId",),
        Effect.DELETE_CREATE,
        "a Nebius resource stays in the project it was created in: a new cluster (and GPU cluster) in the other "
        "project, the old one deleted with every node group, node, boot disk and workload",
        f"{NEBIUS_API} nebius/common/v1/metadata.proto (parent_id: the container the resource belongs to) and "
        'nebius/mk8s/v1/node_group.proto ("A Node is a Nebius Compute Instance created in Cluster.metadata.parent_id '
        f'container"); {NEBIUS_SDK}, BillingV1PricingPolicyArgs.metadata: "Parent is a project, immutable"',
    ),
    Consequence(
        ("subnetId",),
        CLUSTER_TYPE,
        ("controlPlane.subnetId",),
        Effect.DELETE_CREATE,
        "Nebius does not move a control plane to another subnet: a new cluster on it, the old one deleted with every "
        "node group, node, boot disk and workload",
        f"{CLUSTER_PROTO}.subnet_id: (field_behavior) = IMMUTABLE; {NEBIUS_SDK}, "
        'Mk8sV1ClusterControlPlaneArgs.subnet_id: "Also will be default NodeGroup subnet"',
    ),
    Consequence(
        ("etcdClusterSize",),
        CLUSTER_TYPE,
        ("controlPlane.etcdClusterSize",),
        Effect.IN_PLACE,
        "the control plane's etcd is resized; no node is touched (at 1 member the Kubernetes API is down while its "
        "control plane instance fails; at 3 it is highly available)",
        f"{CLUSTER_PROTO}.etcd_cluster_size: allowed 0, 1, 3 and, unlike subnet_id, not IMMUTABLE; {NEBIUS_SDK}, "
        "Mk8sV1ClusterControlPlaneArgs.etcd_cluster_size: 'Control plane with `etcd_cluster_size: 3` called \"Highly "
        "Available\"'",
    ),
    Consequence(
        ("publicEndpoint",),
        CLUSTER_TYPE,
        ("controlPlane.endpoints",),
        Effect.IN_PLACE,
        "the public endpoint is created or removed; no node is touched (a kubeconfig that uses it stops working when "
        "it is removed)",
        f"{CLUSTER_PROTO}.endpoints, not IMMUTABLE; {NEBIUS_SDK}, Mk8sV1ClusterControlPlaneEndpointsArgs.public_endpoint: "
        '"When set, a public endpoint is created"',
    ),
    Consequence(
        ("clusterName",),
        CLUSTER_TYPE,
        ("name",),
        Effect.IN_PLACE,
        "the cluster is renamed in Nebius (its Pulumi name stays); no node is touched",
        f"{NEBIUS_API} nebius/common/v1/metadata.proto: name carries no IMMUTABLE behaviour (subnet_id does); the "
        "program's Pulumi names come from the stack, not from clusterName (components/cluster.py)",
    ),
    Consequence(
        ("kubernetesVersion",),
        NODE_GROUP_TYPE,
        ("version",),
        Effect.MINOR_UPGRADE,
        "every node of the group is replaced by one of the new version, a batch at a time under its strategy, "
        "after the control plane",
        f'{NEBIUS_SDK}, Mk8sV1NodeGroupArgs.version and .strategy ("Defines deployment - roll-out, or nodes '
        f're-creation during configuration change"); {SKEW_POLICY}',
    ),
    Consequence(
        (f"{GROUP}.platform", f"{GROUP}.preset", "systemNodePlatform", "systemNodePreset"),
        NODE_GROUP_TYPE,
        ("template.resources",),
        Effect.ROLLING_REPLACE,
        "every node of the group is replaced by one of the new platform or preset",
        ROLL_OUT,
    ),
    Consequence(
        (f"{GROUP}.driversPreset", f"{GROUP}.dra"),
        NODE_GROUP_TYPE,
        ("template.gpuSettings",),
        Effect.ROLLING_REPLACE,
        "every node of the group is replaced by one booted from the new driver image (or with DRA turned on or off)",
        ROLL_OUT,
    ),
    Consequence(
        (f"{GROUP}.bootDiskSizeGib", "systemNodeBootDiskGib"),
        NODE_GROUP_TYPE,
        ("template.bootDisk",),
        Effect.ROLLING_REPLACE,
        "every node of the group is replaced; what its boot disk held is lost",
        ROLL_OUT,
    ),
    Consequence(
        (f"{GROUP}.infiniband", "infinibandFabric"),
        NODE_GROUP_TYPE,
        ("template.gpuCluster",),
        Effect.ROLLING_REPLACE,
        "every node of the group is replaced by one that joins (or leaves) the InfiniBand GPU cluster",
        ROLL_OUT,
    ),
    Consequence(
        (f"{GROUP}.capacity",),
        NODE_GROUP_TYPE,
        (
            "template.preemptible",
            "template.followsSpotPrice",
            "template.spotPricingPolicy",
            "template.reservationPolicy",
        ),
        Effect.ROLLING_REPLACE,
        "every node of the group is replaced by one of the new capacity (spot, reservation or on-demand)",
        ROLL_OUT,
    ),
    Consequence(
        ("nodeServiceAccountId",),
        NODE_GROUP_TYPE,
        ("template.serviceAccountId",),
        Effect.ROLLING_REPLACE,
        "every node of every group is replaced by one with the new service account's credentials",
        ROLL_OUT,
    ),
    Consequence(
        (f"{GROUP}.labels",),
        NODE_GROUP_TYPE,
        ("template.metadata",),
        Effect.NEW_NODES_ONLY,
        "only nodes created afterwards carry the new labels; existing nodes keep the old ones until replaced "
        "(label them by hand first when something selects on them, such as the GPU Operator's opt-out label)",
        NOT_ROLLED_OUT,
    ),
    Consequence(
        (f"{GROUP}.taints",),
        NODE_GROUP_TYPE,
        ("template.taints",),
        Effect.NEW_NODES_ONLY,
        "only nodes created afterwards carry the new taints; existing nodes keep the old ones until replaced",
        NOT_ROLLED_OUT,
    ),
    Consequence(
        (f"{GROUP}.fixedNodeCount", f"{GROUP}.autoscaling", "systemNodeCount"),
        NODE_GROUP_TYPE,
        ("fixedNodeCount", "autoscaling"),
        Effect.IN_PLACE,
        "nodes are added or removed; the others stay (a removed node's pods are evicted)",
        f'{NEBIUS_SDK}, Mk8sV1NodeGroupArgs.fixed_node_count: "Can be changed manually at any time"',
    ),
    Consequence(
        (f"{GROUP}.strategy", f"{GROUP}.autoRepair", "systemNodeStrategy", "systemNodeAutoRepair"),
        NODE_GROUP_TYPE,
        ("strategy", "autoRepair"),
        Effect.IN_PLACE,
        "changes how later roll-outs and repairs run; no node is touched",
        f"{NEBIUS_SDK}: strategy and auto_repair are fields of the node group, outside its template, so not rolled out",
    ),
    Consequence(
        ("clusterName",),
        NODE_GROUP_TYPE,
        ("name",),
        Effect.IN_PLACE,
        "the group is renamed in Nebius (<clusterName>-<group>; its Pulumi name stays); no node is touched",
        f"{NEBIUS_API} nebius/common/v1/metadata.proto: name carries no IMMUTABLE behaviour",
    ),
    Consequence(
        (f"{GROUP}.name",),
        NODE_GROUP_TYPE,
        ("urn",),
        Effect.DELETE_CREATE,
        "the group is another Pulumi resource: Pulumi creates what the change adds (a renamed group's new one) first "
        "and deletes the old group at the end of the update, with all its nodes, their boot disks and running pods; "
        "until then both run and are billed",
        f"Pulumi resource names ({PULUMI_NAMES}): a new logical name is a new URN, so the old resource is deleted "
        f'unless an alias names it; How Pulumi works ({HOW_PULUMI_WORKS}): "At the end the program execution, if a '
        'particular resource R is never registered, the engine will make a delete request to the resource provider"',
    ),
    Consequence(
        (
            "draDriverVersion",
            "draDriverValues",
            "draDriverRoot",
            "draComputeDomains",
            "gpuOperatorVersion",
            "networkOperatorVersion",
            "gpuMetrics",
            "dcgmExporterVersion",
            "gpuMetricsProfile",
            "gpuMetricsValues",
            "prometheusServiceMonitor",
            "kubePrometheusStack",
            "kubePrometheusStackVersion",
        ),
        HELM_RELEASE_TYPE,
        ("version", "values", "chart"),
        Effect.HELM_RESTART,
        "Helm upgrades the release; a changed pod template restarts its pods. For the DRA driver, a change that "
        "reaches its kubelet plugin's pod template (the driver root, ComputeDomains, the log level, most chart "
        "values) restarts the plugin on every GPU node at once: no new claim is prepared until it is back; one "
        "that reaches only the controller (controller.*) leaves the plugin running",
        "Helm upgrade semantics (https://helm.sh/docs/helm/helm_upgrade/) and Kubernetes DaemonSet rolling updates "
        "(https://kubernetes.io/docs/tasks/manage-daemon/update-daemon-set/); nvidia-dra-driver-gpu 25.12.0 and "
        "dra-driver-nvidia-gpu 0.4.1 values.yaml: kubeletPlugin.updateStrategy RollingUpdate, maxUnavailable 100%, "
        "which the stack keeps; what each setting changes, rendered by the real helm (e2e/helm/test_helm_restarts.py)",
    ),
    Consequence(
        ("draDriverChart", "draDriverVersion", "gpuOperatorVersion", "networkOperatorVersion"),
        HELM_RELEASE_TYPE,
        ("chart", "version"),
        Effect.CRDS_NOT_UPDATED,
        "the chart's crds/ folder is installed on a fresh install only: apply the new CRDs by hand before `pulumi up` "
        "(the GPU and Network Operator charts do it in a pre-upgrade hook)",
        f'Helm ({HELM_CRDS}): "There is no support at this time for upgrading or deleting CRDs using Helm"; '
        "kubernetes-sigs/dra-driver-nvidia-gpu docs/upgrade.md at v0.4.0",
    ),
    Consequence(
        (
            "draDriverRepository",
            "gpuOperatorRepository",
            "networkOperatorRepository",
            "dcgmExporterRepository",
            "kubePrometheusStackRepository",
        ),
        HELM_RELEASE_TYPE,
        ("repositoryOpts.repo",),
        Effect.IN_PLACE,
        "not a chart upgrade: the release's chart source changes, and Helm fetches the same chart and version from "
        "the other repository and renders it again into the same objects, so no pod restarts and no CRD changes (a "
        "mirror serving another chart under that version would restart them)",
        "Helm upgrade semantics (https://helm.sh/docs/helm/helm_upgrade/): a release is its chart and values; the "
        "repository is only where the chart is fetched. An oci:// repository is registered in the chart's reference "
        "(components/values/release.py chart_location), which the plan splits back into the chart and its source",
    ),
    Consequence(
        (
            "chartRepositoryUsername",
            "chartRepositoryPassword",
            "chartRepositoryCaFile",
            "chartRepositoryCertFile",
            "chartRepositoryKeyFile",
        ),
        HELM_RELEASE_TYPE,
        # What the plan records of them (tools/plan/changes.py repository_record): whether a login is set, never it.
        ("repositoryOpts.login", "repositoryOpts.caFile", "repositoryOpts.certFile", "repositoryOpts.keyFile"),
        Effect.IN_PLACE,
        "Pulumi updates the release (its repositoryOpts are an input of it), but only how Helm logs in to the mirror "
        "to fetch the chart changes: the same chart and values render the same objects, so no pod restarts (a wrong "
        "login fails the update before anything changes)",
        "pulumi-kubernetes 4.34.2 helm.v3.RepositoryOptsArgs (username, password, ca_file, cert_file, key_file: "
        "options of the chart's fetch, not of the release's objects); Pulumi updates a resource whose inputs differ "
        "(https://www.pulumi.com/docs/iac/concepts/how-pulumi-works/)",
    ),
    Consequence(
        ("draDriverNamespace", "gpuMetricsNamespace"),
        HELM_RELEASE_TYPE,
        ("namespace",),
        Effect.DELETE_CREATE,
        # The program registers every release with deleteBeforeReplace (components/release.py).
        "the release is uninstalled from the old namespace first, then installed in the new one; in between, for a time "
        "not known here (the uninstall, then the install up to the release's timeout), its pods run nowhere: for the DRA "
        "driver, its kubelet plugin is stopped on every GPU node, so no new claim is prepared; running pods keep their "
        "devices",
        "Helm 3 (https://helm.sh/docs/faq/changes_since_helm2/#release-names-are-now-scoped-to-the-namespace): a "
        "release lives in its namespace, so another namespace is a replacement; "
        "Pulumi creates a replacement before it deletes the original unless deleteBeforeReplace is set "
        f"({DELETE_BEFORE_REPLACE}), which the program sets on every release (components/release.py): created first, the "
        "install would fail, since Helm refuses an object another release owns and each chart the stack pins has "
        'cluster-scoped ones (helm v3.20.2 pkg/action/validate.go existingResourceConflict: "invalid ownership '
        'metadata", key "meta.helm.sh/release-namespace" must equal the release\'s namespace)',
    ),
    Consequence(
        ("sampleGpuImage", "sampleRdmaImage"),
        POD_TYPE,
        ("spec.containers",),
        Effect.IN_PLACE,
        "the sample Pod's container restarts with the new image (an image is one of the few Pod fields Kubernetes "
        "changes in place)",
        'k8s.io/kubernetes pkg/apis/core/validation ValidatePodUpdate: "pod updates may not change fields other than '
        '`spec.containers[*].image`, ..."',
    ),
    Consequence(
        ("queues",),
        CLUSTER_QUEUE_TYPE,
        ("spec",),
        Effect.IN_PLACE,
        "Kueue updates the ClusterQueue in place: workloads it admitted keep running, even above a lowered quota (the "
        "stack sets no preemption, so none is evicted to fit it); pending ones are admitted against the new quotas, "
        "borrowing limits and cohort from now on",
        f"Kueue, ClusterQueue ({CLUSTER_QUEUE_DOCS}); {KUEUE_SOURCE} pkg/webhooks/clusterqueue_webhook.go "
        "ValidateClusterQueueUpdate (the new spec is validated as a whole: no field of it is immutable); "
        f"{KUEUE_WORKLOADS}",
    ),
    Consequence(
        ("queues",),
        LOCAL_QUEUE_TYPE,
        ("spec.clusterQueue",),
        Effect.UPDATE_REFUSED,
        "a LocalQueue's ClusterQueue cannot change (a team renamed while its namespace and localQueue stay): the API "
        "server refuses the update, so `pulumi up` fails there; rename the localQueue too (a new LocalQueue), or "
        "delete it first",
        f"Kueue, LocalQueue ({LOCAL_QUEUE_DOCS}); {KUEUE_SOURCE} apis/kueue/v1beta2/localqueue_types.go "
        'LocalQueueSpec.clusterQueue: XValidation rule "self == oldSelf", message "field is immutable"; pulumi-kubernetes '
        "replaces an object only for a new name or namespace (metadataForceNewProperties)",
    ),
    Consequence(
        (f"{GROUP}.taints", "queues"),
        RESOURCE_FLAVOR_TYPE,
        ("spec",),
        Effect.IN_PLACE,
        "Kueue gives the new node labels and tolerations to the pods it admits afterwards; running pods keep theirs",
        f"Kueue, ResourceFlavor ({RESOURCE_FLAVOR_DOCS}); {KUEUE_SOURCE} apis/kueue/v1beta2/resourceflavor_types.go: "
        "nodeLabels and tolerations are immutable only when topologyName is set, which the stack never sets",
    ),
    Consequence(
        ("nebiusProfile", "existingClusterKubeconfig"),
        KUBERNETES_PROVIDER_TYPE,
        ("kubeconfig",),
        Effect.IN_PLACE,
        "the Kubernetes provider reaches the cluster with other credentials; no object changes, since the stack pins "
        "the provider to the cluster's ID (components/cluster_access.py); a kubeconfig of another cluster in "
        "existing-cluster mode moves every Kubernetes object of the stack there",
        'pulumi-kubernetes 4.34.2 ProviderArgs.cluster_identifier: "the provider will _only_ be replaced when '
        '`clusterIdentifier` changes; all other changes to provider configuration will be treated as updates"',
    ),
    Consequence(
        ("protect",),
        NODE_GROUP_TYPE,
        ("protect",),
        Effect.NOTHING,
        "nothing in Nebius changes now: Pulumi records the option in its state. Lifted, a later `pulumi up` that "
        "leaves the group out deletes it with all its nodes, their boot disks and running pods; set, Pulumi refuses to "
        "delete it",
        PROTECT_DOCS,
    ),
    Consequence(
        ("priceOverrides", "protect", "allowedDeviceClasses", "draPluginOutageAccepted"),
        NOTHING_DEPLOYED,
        ("config",),
        Effect.NOTHING,
        "nothing in Nebius or the cluster changes: priceOverrides changes the estimate, protect the option Pulumi "
        "records in its state (a protected resource cannot be deleted), allowedDeviceClasses what the config checks "
        "let user templates request, draPluginOutageAccepted what the pack accepts",
        "the program (components/cost.py, components/config/claim_templates.py, tools/plan/driver_modes.py); "
        f"{PROTECT_DOCS}",
    ),
    Consequence(
        ("userClaimTemplates", "builtinClaimTemplates", "gpuProducts", "multiGpuCount", "claimNamespace"),
        CLAIM_TEMPLATE_TYPE,
        ("spec",),
        Effect.DELETE_CREATE,
        "the template is deleted and created again under its name; claims made from it keep the old spec, new Pods "
        "get the new one",
        f"{CLAIM_TEMPLATE_API}; k8s.io/kubernetes v1.34 pkg/apis/resource/validation "
        'ValidateResourceClaimTemplateUpdate ("field is immutable"); the program marks spec replace_on_changes with '
        "delete_before_replace (components/dra_workloads.py)",
    ),
    Consequence(
        ("claimNamespace", "queues"),
        CLAIM_TEMPLATE_TYPE,
        ("namespace",),
        Effect.DELETE_CREATE,
        "the template is created in the new namespace and deleted from the old one; Pods there that name it get no "
        "claim",
        "pulumi-kubernetes provider/pkg/provider/diff.go: metadataForceNewProperties makes .metadata.namespace (and "
        ".metadata.name) a replacement of any Kubernetes object",
    ),
)


@dataclass(frozen=True)
class Presence:
    """What creating and deleting a whole resource of `resource_type` does: a row for the resource, not a field."""

    settings: tuple[str, ...]
    resource_type: str
    created: str
    deleted: str
    source: str


CLAIM_TEMPLATE_PRESENCE = Presence(
    ("builtinClaimTemplates", "userClaimTemplates", "gpuProducts", "multiGpuCount", "queues"),
    CLAIM_TEMPLATE_TYPE,
    "created: Pods may name it from now on; nothing running changes",
    "DELETED: running Pods keep the claims made from it (a claim made from a template is bound to its Pod and "
    "deleted with it, never with the template); a Pod created afterwards that names it gets no claim and does not "
    "start, so move the workloads (Jobs, Deployments) that name it first",
    f"{CLAIM_TEMPLATE_API}; k8s.io/api core/v1 PodResourceClaim.resourceClaimTemplateName (also the docstring of "
    'pulumi-kubernetes 4.34.2 core.v1.PodResourceClaimArgs): "The template will be used to create a new '
    "ResourceClaim, which will be bound to this pod. When this pod is deleted, the ResourceClaim will also be "
    'deleted."',
)


SAMPLE_POD_PRESENCE = Presence(
    ("samplePods",),
    POD_TYPE,
    "created: the sample Pods claim a GPU (and with InfiniBand a NIC) each until deleted",
    "DELETED: the sample Pods stop and their claims are deleted with them, freeing the devices",
    'k8s.io/api core/v1 PodResourceClaim.resourceClaimTemplateName: "When this pod is deleted, the ResourceClaim '
    'will also be deleted."',
)
NAMESPACE_PRESENCE = Presence(
    ("claimNamespace", "queues", "samplePods"),
    NAMESPACE_TYPE,
    "created: empty until the stack's objects in it are",
    "DELETED with everything in it: its Pods stop, its Jobs, LocalQueues, claim templates and claims go with it, "
    "and so does a team's ClusterQueue that admits from it only, once Kueue's finalizer finds no workload of it left",
    "Kubernetes, Namespaces (https://kubernetes.io/docs/tasks/administer-cluster/namespaces/#deleting-a-namespace): "
    f'"This deletes everything under the namespace!"; {KUEUE_SOURCE} pkg/controller/core/clusterqueue_controller.go '
    "(the ClusterQueue's finalizer is removed when no workload reserves quota there)",
)
CLUSTER_QUEUE_PRESENCE = Presence(
    ("queues",),
    CLUSTER_QUEUE_TYPE,
    "created: Kueue admits the workloads of its LocalQueues against its quotas",
    "DELETED, but Kueue's finalizer (kueue.x-k8s.io/resource-in-use) keeps it Terminating until the workloads it "
    "admitted finish: they keep running; it admits no new one, and its pending workloads stay suspended, "
    'inadmissible ("ClusterQueue <name> is terminating or missing")',
    f"Kueue, ClusterQueue ({CLUSTER_QUEUE_DOCS}); {KUEUE_SOURCE} pkg/webhooks/clusterqueue_webhook.go (adds the "
    "finalizer) and pkg/controller/core/clusterqueue_controller.go (removes it only when ClusterQueueEmpty: no "
    f"workload reserves quota there); {KUEUE_WORKLOADS}",
)
LOCAL_QUEUE_PRESENCE = Presence(
    ("queues",),
    LOCAL_QUEUE_TYPE,
    "created: Jobs labelled kueue.x-k8s.io/queue-name with it are queued from now on",
    "DELETED at once (Kueue puts no finalizer on a LocalQueue): the workloads it admitted keep running; its pending "
    'ones, and Jobs labelled with it afterwards, stay suspended, inadmissible ("LocalQueue <name> doesn\'t exist")',
    f"Kueue, LocalQueue ({LOCAL_QUEUE_DOCS}); {KUEUE_WORKLOADS}",
)
RESOURCE_FLAVOR_PRESENCE = Presence(
    ("queues",),
    RESOURCE_FLAVOR_TYPE,
    "created: a ClusterQueue may quota its GPUs",
    "DELETED once no ClusterQueue names it: Kueue's finalizer (kueue.x-k8s.io/resource-in-use) keeps it Terminating "
    "while one does",
    f"Kueue, ResourceFlavor ({RESOURCE_FLAVOR_DOCS}); {KUEUE_SOURCE} pkg/controller/core/resourceflavor_controller.go "
    "(the finalizer is removed only when ClusterQueuesUsingFlavor is empty)",
)
PRESENCES = (
    CLAIM_TEMPLATE_PRESENCE,
    SAMPLE_POD_PRESENCE,
    NAMESPACE_PRESENCE,
    CLUSTER_QUEUE_PRESENCE,
    LOCAL_QUEUE_PRESENCE,
    RESOURCE_FLAVOR_PRESENCE,
)


def presence_of(resource_type: str) -> Presence | None:
    """The row for creating and deleting a whole resource of `resource_type`; None when the table has none."""
    return next((row for row in PRESENCES if row.resource_type == resource_type), None)


@dataclass(frozen=True)
class Eviction:
    """What a roll-out that replaces a GPU group's nodes does to the stack's own Pods of `resource_type` on them."""

    settings: tuple[str, ...]
    resource_type: str
    does: str
    source: str


SAMPLE_POD_EVICTION = Eviction(
    ("samplePods",),
    POD_TYPE,
    "evicted when a roll-out drains its node, or stopped when its group is deleted: its claim is deleted with it; a "
    "bare Pod that no controller owns, it is not started again on another node: the next `pulumi up --refresh` (what "
    "the deploy workflow runs) finds it gone and creates it again",
    'Kubernetes Pods, Working with Pods (https://kubernetes.io/docs/concepts/workloads/pods/): "Pods do not, by '
    "themselves, self-heal. If a Pod is scheduled to a node that then fails, the Pod is deleted; likewise, a Pod "
    "won't survive an eviction due to a lack of resources or Node maintenance.\"; the sample Pods are bare Pods "
    "(components/values/sample_pods.py); `pulumi refresh` drops a deleted resource from the state "
    "(https://www.pulumi.com/docs/iac/cli/commands/pulumi_refresh/)",
)


def consequence_of_setting(setting: str, resource_type: str = NODE_GROUP_TYPE) -> Consequence | None:
    """The row of a stack setting (`gpuNodeGroups[].preset`, `systemNodeCount`) on `resource_type`, for a tool that
    compares settings rather than registered fields (`make cost`)."""
    return next((row for row in CONSEQUENCES if setting in row.settings and row.resource_type == resource_type), None)


def consequences_of(resource_type: str, path: str) -> tuple[Consequence, ...]:
    """The rows for a changed field (a dotted path of the registered inputs); empty when the table has none."""
    return tuple(row for row in CONSEQUENCES if row.matches(resource_type, path))
