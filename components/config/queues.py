"""`queues`: GPU quotas per team, which Kueue enforces, checked against the GPU groups and claim templates.

Its shape is `QueuesInput` (components/input/queues.py), a field of StackInput checked with the
rest of the stack file; its rules here need the GPU groups and the claim templates: a quota names a group that exists and fits in it,
borrowing needs a cohort, and every template a team's namespace gets is one Kueue can count.

What Kueue can count is read from the served module sigs.k8s.io/kueue v0.17.0,
pkg/dra/claims.go `countDevicesPerClass`: a workload whose claim template breaks one of its
rules is never admitted (its Workload gets the field error). It counts only requests
`exactly` with `allocationMode: ExactCount` and a count; it refuses `firstAvailable`, CEL
`selectors`, `adminAccess`, `allocationMode: All`, and any claim with `constraints` or
`config`; a DeviceClass not in `resources.deviceClassMappings` is an error as well.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from components.config.errors import ConfigProblems, config_key, did_you_mean, shown, shown_name, team_where
from components.config.namespaces import defaulted_kueue_namespace, refuse_taken_namespace
from components.config.repositories import chart_repository
from components.dra_constants import (
    EXACT_COUNT,
    GPU_BY_PRODUCT_TEMPLATE,
    GPU_CLASS,
    GPU_NIC_TEMPLATE,
    GPU_TEMPLATE,
    IB_CLASS,
    IB_TEMPLATE,
    MULTI_GPU_TEMPLATE,
    RDMA_CLASS,
    RDMA_TEMPLATE,
)
from components.input.queues import DEFAULT_KUEUE_NAMESPACE, QueuesInput, TeamInput
from components.model import ClaimsConfig, DeviceSelection, GpuNodeGroupConfig, UserClaimTemplate
from components.queue_model import (
    DRA_GATE,
    KUEUE_REPOSITORY,
    NO_QUEUES,
    QueuesConfig,
    TeamQueue,
    TeamQuota,
)
from components.repository_model import RepositoryAccess

KEY = "queues"
# The feature gates of sigs.k8s.io/kueue v0.17.0 (pkg/features/kube_features.go defaultVersionedFeatureGates).
KUEUE_FEATURE_GATES = [
    "PartialAdmission",
    "FlavorFungibility",
    "VisibilityOnDemand",
    "PrioritySortingWithinCohort",
    "FairSharingPreemptWithinNominal",
    "FairSharingPrioritizeNonBorrowing",
    "MultiKueue",
    "LendingLimit",
    "MultiKueueBatchJobWithManagedBy",
    "TopologyAwareScheduling",
    "LocalQueueMetrics",
    "LocalQueueDefaulting",
    "TASProfileMixed",
    "HierarchicalCohorts",
    "AdmissionFairSharing",
    "ObjectRetentionPolicies",
    "TASFailedNodeReplacement",
    "ElasticJobsViaWorkloadSlices",
    "ElasticJobsViaWorkloadSlicesWithTAS",
    "TASFailedNodeReplacementFailFast",
    "TASReplaceNodeOnPodTermination",
    "ManagedJobsNamespaceSelectorAlwaysRespected",
    "TASBalancedPlacement",
    "DynamicResourceAllocation",
    "DRAExtendedResources",
    "MultiKueueAdaptersForCustomJobs",
    "WorkloadRequestUseMergePatch",
    "SanitizePodSets",
    "MultiKueueAllowInsecureKubeconfigs",
    "ReclaimablePods",
    "PropagateBatchJobLabelsToWorkload",
    "MultiKueueClusterProfile",
    "FailureRecoveryPolicy",
    "SkipFinalizersForPodsSuspendedByParent",
    "MultiKueueWaitForWorkloadAdmitted",
    "MultiKueueRedoAdmissionOnEvictionInWorker",
    "TLSOptions",
    "RemoveFinalizersWithStrictPatch",
    "TASReplaceNodeOnNodeTaints",
    "AssignQueueLabelsForPods",
    "TASMultiLayerTopology",
    "SchedulingEquivalenceHashing",
    "SchedulerLongRequeueInterval",
    "SchedulerTimestampPreemptionBuffer",
    "CustomMetricLabels",
    "SparkApplicationIntegration",
    "MultiKueueOrchestratedPreemption",
    "PriorityBoost",
    "AdmissionGatedBy",
    "ShortWorkloadNames",
    "FastQuotaReleaseInPodIntegration",
]


def group_gpus(group: GpuNodeGroupConfig) -> int:
    """The most GPUs a group can hold: its largest size times the GPUs of one node."""
    return group.node_range.largest * group.gpus_per_node


def uncountable_reason(
    requests: Sequence[tuple[str, DeviceSelection | None]],
    constraints: bool,
    config: bool,
    counted: Sequence[str],
) -> str | None:
    """Why Kueue v0.17.0 cannot count a claim (pkg/dra/claims.go countDevicesPerClass), or None when it can.

    `requests` pairs each request's name with its `exactly` selection (None for firstAvailable).
    """
    if constraints:
        return "it has constraints (matchAttribute), which Kueue does not support in DRA quota accounting"
    if config:
        return "it has device config, which Kueue does not support in DRA quota accounting"
    for name, exactly in requests:
        if exactly is None:
            return f"request {name} uses firstAvailable, which Kueue does not count"
        if exactly.selectors:
            return f"request {name} has CEL selectors, which Kueue does not support (the flavor's node labels choose the GPUs instead)"
        if exactly.admin_access:
            return f"request {name} asks for adminAccess, which Kueue does not support"
        if exactly.allocation_mode != EXACT_COUNT:
            return f"request {name} has allocationMode {exactly.allocation_mode}; Kueue counts only ExactCount with a count"
        if exactly.device_class not in counted:
            return (
                f"request {name} asks for DeviceClass {exactly.device_class}, which the queues do not count "
                f"(queues.deviceClasses: {', '.join(counted)}); Kueue refuses a DeviceClass it has no mapping for"
            )
    return None


def builtin_requests(name: str, claims: ClaimsConfig) -> tuple[list[tuple[str, DeviceSelection | None]], bool]:
    """The requests of a built-in template and whether it has constraints, as components/values/claim_templates.py
    builtin_template_specs builds it (tests/components/test_queues.py holds the two together)."""
    one_gpu = DeviceSelection(GPU_CLASS, 1, EXACT_COUNT)
    shapes: dict[str, tuple[list[tuple[str, DeviceSelection | None]], bool]] = {
        GPU_TEMPLATE: ([("gpu", one_gpu)], False),
        MULTI_GPU_TEMPLATE: ([("gpus", DeviceSelection(GPU_CLASS, claims.multi_gpu_count, EXACT_COUNT))], False),
        GPU_BY_PRODUCT_TEMPLATE: ([("gpu", DeviceSelection(GPU_CLASS, 1, EXACT_COUNT, ("productName",)))], False),
        IB_TEMPLATE: ([("ib", DeviceSelection(IB_CLASS, 1, EXACT_COUNT))], False),
        RDMA_TEMPLATE: ([("rdma", DeviceSelection(RDMA_CLASS, 1, EXACT_COUNT))], False),
        GPU_NIC_TEMPLATE: ([("gpu", one_gpu), ("nic", DeviceSelection(IB_CLASS, 1, EXACT_COUNT))], True),
    }
    return shapes[name]


def _user_requests(template: UserClaimTemplate) -> list[tuple[str, DeviceSelection | None]]:
    return [(request.name, request.exactly) for request in template.requests]


def _team_templates(
    queues: QueuesInput, claims: ClaimsConfig, counted: Sequence[str], problems: ConfigProblems
) -> tuple[str, ...]:
    """The templates each team namespace gets: those named, each one Kueue can count; by default every such one."""
    user = {template.name: template for template in claims.user_templates}
    known = [*claims.active_builtin_templates, *user]

    def reason(name: str) -> str | None:
        if name in user:
            template = user[name]
            return uncountable_reason(
                _user_requests(template), bool(template.constraints), bool(template.config), counted
            )
        requests, constraints = builtin_requests(name, claims)
        return uncountable_reason(requests, constraints, False, counted)

    if queues.claimTemplates is None:
        return tuple(name for name in known if reason(name) is None)
    chosen: list[str] = []
    for index, name in enumerate(queues.claimTemplates):
        where = f"{config_key(KEY)}: claimTemplates[{index}]"
        if name not in known:
            problems.add(
                where,
                f"got {shown(name)}, which is no claim template of this stack{did_you_mean(name, known)}; "
                f"allowed: {', '.join(known) or 'none'}",
            )
        elif (why := reason(name)) is not None:
            problems.add(where, f"template {name} cannot be counted against a quota by Kueue {KUEUE_RULES}: {why}")
        elif name in chosen:
            problems.add(where, f"repeats {name}")
        else:
            chosen.append(name)
    return tuple(chosen)


KUEUE_RULES = "(sigs.k8s.io/kueue v0.17.0 counts only `exactly` requests with ExactCount and a count, no selectors)"


def _team(entry: TeamInput, groups: Mapping[str, GpuNodeGroupConfig], problems: ConfigProblems) -> TeamQueue:
    where = team_where(shown_name(entry.name))
    seen: set[str] = set()
    quotas = []
    for index, quota in enumerate(entry.quotas):
        place = f"quotas[{index}]"
        group = groups.get(quota.group)
        if group is None:
            problems.add(
                where,
                f"{place}.group got {shown(quota.group)}, which is no GPU node group of this stack, so it has no "
                f"flavor{did_you_mean(quota.group, list(groups))}; allowed: {', '.join(groups)}",
            )
        elif quota.gpus > (most := group_gpus(group)):
            problems.add(
                where,
                f"{place}.gpus got {quota.gpus}, more than group {group.name} can hold ({most}: "
                f"{most // max(group.gpus_per_node, 1)} nodes of {group.gpus_per_node} GPUs); allowed: 0 to {most}",
            )
        if quota.group in seen:
            problems.add(where, f"{place} repeats group {quota.group}; one quota per group")
        seen.add(quota.group)
        if quota.borrowingLimit is not None and entry.cohort is None:
            problems.add(
                where,
                f"{place}.borrowingLimit is set but the team has no cohort; a ClusterQueue borrows only inside its "
                "cohort (Kueue refuses borrowingLimit without one): set cohort or remove borrowingLimit",
            )
        quotas.append(TeamQuota(group=quota.group, gpus=quota.gpus, borrowing_limit=quota.borrowingLimit))
    return TeamQueue(
        name=entry.name,
        namespace=entry.namespace or entry.name,
        local_queue=entry.localQueue or entry.name,
        quotas=tuple(quotas),
        cohort=entry.cohort,
    )


def _unique(teams: Sequence[TeamQueue], taken: Mapping[str, str], problems: ConfigProblems) -> None:
    names: set[str] = set()
    namespaces: dict[str, str] = dict(taken)
    for team in teams:
        if team.name in names:
            problems.add(
                team_where(shown_name(team.name)), "is declared twice; team names (their ClusterQueues) must be unique"
            )
        names.add(team.name)
        refuse_taken_namespace(
            f"{team_where(shown_name(team.name))} namespace",
            team.namespace,
            namespaces,
            "the stack creates each team's namespace (the team's name unless namespace is set) and deletes it with "
            "the team, so each team needs one of its own",
            problems,
        )
        namespaces.setdefault(team.namespace, f"team {team.name}")


def parse_queues_config(
    queues: QueuesInput,
    teams_refused: bool,
    gpu_groups: Sequence[GpuNodeGroupConfig],
    claims: ClaimsConfig,
    releases: Mapping[str, str],
    access: RepositoryAccess | None,
    problems: ConfigProblems,
) -> QueuesConfig:
    """The queues of `nebius-dra:queues`, whose shape StackInput checked; off (NO_QUEUES) when it declares no team.

    `teams_refused` says teams were given whose shape was refused (the stack's salvage took them out).
    `releases` are the namespaces of the stack's other releases (`release_namespaces`), which Kueue's and
    the teams' may not be; `access` goes with Kueue's repository when the stack names one."""
    for gate in queues.featureGates:
        if gate not in KUEUE_FEATURE_GATES:
            problems.add(
                f"{config_key(KEY)}: featureGates",
                f"key {shown(gate)} is no feature gate of Kueue v0.17.0{did_you_mean(gate, KUEUE_FEATURE_GATES)}",
            )
    others = {**releases, claims.namespace: "the claim templates (nebius-dra:claimNamespace)"}
    if queues.teams or teams_refused:  # Kueue is installed: teams were given, if some were refused
        refuse_taken_namespace(
            f"{config_key(KEY)}: namespace",
            queues.namespace,
            # A namespace setting that takes Kueue's default is refused on that setting (defaulted_kueue_namespace).
            {} if defaulted_kueue_namespace(queues) else others,
            "Kueue's controller and webhooks belong in a namespace of their own",
            problems,
            example=DEFAULT_KUEUE_NAMESPACE,
        )
    if not queues.teams:
        if not teams_refused and (unused := sorted(queues.model_fields_set - {"teams"})):
            problems.add(
                config_key(KEY),
                f"sets {', '.join(unused)} but no team (teams is empty): Kueue is installed only for teams, so "
                f"{'they mean' if len(unused) > 1 else 'it means'} nothing; add teams, or remove {', '.join(unused)}",
            )
        return NO_QUEUES
    groups = {group.name: group for group in gpu_groups}
    teams = tuple(_team(entry, groups, problems) for entry in queues.teams)
    _unique(teams, {**others, queues.namespace: "Kueue's release (nebius-dra:queues namespace)"}, problems)
    counted = tuple(dict.fromkeys(queues.deviceClasses))
    return QueuesConfig(
        teams=teams,
        device_classes=counted,
        claim_templates=_team_templates(queues, claims, counted, problems),
        namespace=queues.namespace,
        repository=chart_repository(queues.repository, KUEUE_REPOSITORY, access),
        feature_gates=tuple({DRA_GATE: True, **queues.featureGates}.items()),
    )
