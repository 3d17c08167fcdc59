"""The whole stack's configuration, parsed once into a `StackConfig`.

`__main__.py` hands `parse_stack_config` the strings Pulumi gives the program; they are
decoded by declared type, checked for shape by the schema (pydantic, strict), then checked
by the rules that need more than one field. Everything deeper receives the frozen models
and never reads `pulumi.Config`. Nothing here registers a resource: a bad config stops the
program before the first one, with every problem named by its key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from pydantic import ValidationError

from components.config.chart_keys import credential_shaped_paths
from components.config.claim_templates import parse_claims_config
from components.config.dependent import (
    unused_by_groups_problems,
    unused_setting_problems,
    unused_without_a_cluster_problems,
)
from components.config.driver import parse_driver_config
from components.config.errors import ConfigProblems, add_validation_problems, config_key, shown
from components.config.gpu_metrics import parse_observability_config
from components.config.namespaces import release_namespaces
from components.config.node_groups import check_node_group_names, parse_gpu_node_groups
from components.config.prices import stack_prices
from components.config.queues import parse_queues_config
from components.config.raw import RawConfig, config_secrets, decode_config, secret_problems
from components.config.reading import DuplicateKeyError, InputError, parse_yaml, printable
from components.config.repositories import mirror_access_problems, release_repositories, repository_access
from components.config.rollout import parse_auto_repair, parse_strategy
from components.config.salvage import LeftOut, MeaningProblems, Salvaged, salvage
from components.config.stack_file import SECRET_PLACEHOLDER
from components.dra_minors import SUPPORTED_MINORS
from components.dra_minors import TABLE_FILE as MINORS_TABLE
from components.input.fields import KUBERNETES_VERSION_RULE, RESOURCE_NAME_PATTERN
from components.input.stack import SECRET_CAPABLE_KEYS, StackInput
from components.model import (
    SYSTEM_ROLLOUT,
    ClusterConfig,
    GpuNodeGroupConfig,
    PriceTable,
    StackConfig,
    SystemNodeGroupConfig,
)
from components.resource_presets import OFFERED_PRESETS, unoffered_preset

MIN_KUBERNETES = (1, 34)
VERSION_PATTERN = re.compile(r"^([0-9]{1,3})\.([0-9]{1,3})(?:-nebius-node\.([0-9]{1,6}))?\Z")
PATCH_VERSION_PATTERN = re.compile(r"^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,6})\Z")
CLUSTER_NAME = re.compile(RESOURCE_NAME_PATTERN)
# GPU group fields that only the group's own node group reads: no rule across the stack (driver,
# claims, queues, metrics) changes with them, so a refused one holds back none of those rules.
GROUP_OWN_FIELDS = ("bootDiskSizeGib", "strategy", "autoRepair", "capacity")
# The price check alone reads a group's capacity (whether an override's spot rate prices a spot node, `priced_nodes`),
# so a refused capacity holds it back too.
PRICE_UNREAD_GROUP_FIELDS = tuple(field for field in GROUP_OWN_FIELDS if field != "capacity")


def priced_nodes(gpu_groups: Sequence[GpuNodeGroupConfig]) -> list[tuple[str, str, bool]]:
    """What each GPU group runs, as the price check matches overrides to it: platform, preset and spot or not."""
    return [(group.platform, group.preset, group.spot) for group in gpu_groups]


def kubernetes_version_problem(version: str) -> str | None:
    allowed = KUBERNETES_VERSION_RULE.removeprefix("allowed: ")
    patch = PATCH_VERSION_PATTERN.match(version)
    if patch:
        return f'got {shown(version)}: Nebius mk8s takes no patch version; write "{patch.group(1)}.{patch.group(2)}" (allowed: {allowed})'
    match = VERSION_PATTERN.match(version)
    if not match:
        return f"got {shown(version)}; allowed: {allowed}"
    if (int(match.group(1)), int(match.group(2))) < MIN_KUBERNETES:
        hint = (
            " (an unquoted 1.30 in YAML reads as 1.3: quote the version)"
            if re.match(r"^[0-9]+\.[0-9]\Z", version)
            else ""
        )
        return f'got {shown(version)}: DRA\'s resource.k8s.io/v1 API is GA from Kubernetes 1.34, so the stack needs 1.34 or later; write "1.34"{hint}'
    if f"{match.group(1)}.{match.group(2)}" not in SUPPORTED_MINORS:
        return (
            f"got {shown(version)}: the stack has no DRA rules for that minor (its feature gates, the fields they "
            f"guard, its objects' schema); a minor is added as a row of {MINORS_TABLE.relative_to(MINORS_TABLE.parents[1])} "
            f"with its sources; {KUBERNETES_VERSION_RULE}"
        )
    return None


def default_cluster_name_problem(stack: str) -> str | None:
    """Why the default clusterName `dra-<stack>` is not a Nebius name, or None when it is one."""
    name = f"dra-{stack}"
    if CLUSTER_NAME.fullmatch(name):
        return None
    return (
        f"the default dra-<stack> gives {shown(name)}, which is not a Nebius name (at most 63 "
        "lowercase letters, digits and '-', starting with a letter)"
    )


def _cluster_name(given: str, stack: str, problems: ConfigProblems) -> str:
    if not given and (problem := default_cluster_name_problem(stack)):
        problems.add(config_key("clusterName"), f"is empty, and {problem}; set clusterName")
    return given or f"dra-{stack}"


def _validated(raw: RawConfig, problems: ConfigProblems) -> Salvaged:
    """The stack input, or its salvaged rest when some values have the wrong shape (each one a problem)."""
    document, undecodable = decode_config(raw.values, problems)
    secret_problems(raw.secret_keys, SECRET_CAPABLE_KEYS, problems)
    version = document.get("kubernetesVersion")
    left_out = LeftOut(keys=set(undecodable))
    if isinstance(version, str) and (problem := kubernetes_version_problem(version)):
        problems.add(config_key("kubernetesVersion"), problem)
        # Refused though the schema took it: no rule may judge templates or gates by a version the stack refused.
        left_out.keys.add("kubernetesVersion")
    try:
        return Salvaged(StackInput.model_validate(document), left_out)
    except ValidationError as error:
        # A kubernetesVersion refused above is not worded again by the schema (its length bound names the same rule).
        add_validation_problems(problems, error, document, StackInput, skip=left_out.keys)
        salvaged = salvage(document, error, left_out)
        for later, where, renamed in salvaged.read_as:
            add_validation_problems(problems, later, where, StackInput, within=renamed)
        return salvaged


def _check_system_preset(system_nodes: SystemNodeGroupConfig, prices: PriceTable, problems: ConfigProblems) -> None:
    """`systemNodePreset` must be one Nebius offers on `systemNodePlatform` (components/resource_presets.json).

    A platform neither table knows is a slip the price check names with its closest platform (cpu-d9 for cpu-d3), so
    the preset is not judged on it too; one priced here but without a row of presets takes no preset until it has one.
    """
    platform = system_nodes.platform
    if platform.startswith("gpu-") or (
        platform not in OFFERED_PRESETS and platform not in {price.platform for price in prices.cpu}
    ):
        return
    unoffered = unoffered_preset(platform, system_nodes.preset, config_key("systemNodePlatform"))
    if unoffered is not None:
        problems.add(config_key("systemNodePreset"), f"got {unoffered}")


def parse_stack_config(
    raw: Mapping[str, str] | RawConfig, stack: str, price_table: PriceTable | None = None
) -> StackConfig:
    """Turns the raw config into a `StackConfig`, or raises one `ConfigError` listing every problem.

    Prices come from `price_table` (default: the project's `prices/nebius.yaml`) under the
    stack's `priceOverrides`.
    """
    given = raw if isinstance(raw, RawConfig) else RawConfig(raw)
    shape_problems = ConfigProblems(secrets=config_secrets(given))
    for key, problem in sorted(given.look_alikes.items()):
        shape_problems.add(printable(key), problem)
    salvaged = _validated(given, shape_problems)
    settings = salvaged.settings
    if settings is None:
        shape_problems.raise_if_any()
        raise AssertionError("a failed validation always records a problem")
    # The rules below judge what validated; those reading a refused value wait for its fix.
    problems = MeaningProblems(shape_problems, salvaged.left_out)
    across_groups = ("gpuNodeGroups", "infinibandFabric", "kubernetesVersion")
    by_groups = problems.held_back_for(*across_groups, ignoring=GROUP_OWN_FIELDS)
    by_templates = problems.held_back_for(*across_groups, "userClaimTemplates", ignoring=GROUP_OWN_FIELDS)
    cluster = ClusterConfig(
        name=_cluster_name(settings.clusterName, stack, problems),
        parent_id=settings.parentId,
        subnet_id=settings.subnetId,
        kubernetes_version=settings.kubernetesVersion,
        etcd_cluster_size=settings.etcdClusterSize,
        public_endpoint=settings.publicEndpoint,
        nebius_profile=settings.nebiusProfile or None,
    )
    system_nodes = SystemNodeGroupConfig(
        platform=settings.systemNodePlatform,
        preset=settings.systemNodePreset,
        node_count=settings.systemNodeCount,
        boot_disk_gib=settings.systemNodeBootDiskGib,
        strategy=parse_strategy(
            settings.systemNodeStrategy,
            SYSTEM_ROLLOUT,
            settings.systemNodeCount,
            config_key("systemNodeCount"),
            config_key("systemNodeStrategy"),
            problems,
            field="",
        ),
        auto_repair=parse_auto_repair(
            settings.systemNodeAutoRepair, config_key("systemNodeAutoRepair"), problems, field=""
        ),
    )
    if system_nodes.platform.startswith("gpu-"):
        problems.add(
            config_key("systemNodePlatform"),
            f"got {shown(system_nodes.platform)}; the system node group runs controllers and needs a CPU platform such as cpu-d3",
        )
    gpu_groups = parse_gpu_node_groups(settings.gpuNodeGroups, settings.infinibandFabric, problems)
    check_node_group_names(cluster.name, gpu_groups, settings.infinibandFabric, problems)
    access = repository_access(settings, given.secret_keys, problems)
    driver = parse_driver_config(settings, gpu_groups, "draDriverValues" in given.secret_keys, access, by_groups)
    unused_setting_problems(settings, problems)
    unused_without_a_cluster_problems(settings, problems)
    unused_by_groups_problems(settings, gpu_groups, driver, by_groups)
    config = StackConfig(
        cluster=cluster,
        system_nodes=system_nodes,
        gpu_node_groups=gpu_groups,
        infiniband_fabric=settings.infinibandFabric or None,
        protect=settings.protect,
        node_service_account_id=settings.nodeServiceAccountId or None,
        driver=driver,
        claims=(claims := parse_claims_config(settings, gpu_groups, driver, by_groups)),
        queues=parse_queues_config(
            settings.queues,
            salvaged.left_out.lost_teams(),
            gpu_groups,
            claims,
            release_namespaces(settings, driver),
            access,
            by_templates,
        ),
        observability=parse_observability_config(settings, gpu_groups, driver, access, by_groups),
        prices=stack_prices(
            price_table,
            settings.priceOverrides,
            problems,
            settings.systemNodePlatform,
            priced_nodes(gpu_groups),
            problems.held_back_for("gpuNodeGroups", "systemNodePlatform", ignoring=PRICE_UNREAD_GROUP_FIELDS),
        ),
        existing_kubeconfig=existing_kubeconfig(settings, given, problems),
    )
    mirror_access_problems(access, release_repositories(config), problems)
    _check_system_preset(system_nodes, config.prices, problems)
    if config.creates_cluster:
        for key in ("parentId", "subnetId"):
            if not getattr(settings, key):
                problems.add(
                    config_key(key),
                    f"is required to create the cluster: set it with `pulumi config set {config_key(key)} <id>` "
                    f"(or deploy onto an existing cluster with {config_key('existingClusterKubeconfig')})",
                )
    plain_credential_problems(settings, given, problems)
    problems.raise_if_any()
    return config


def plain_credential_problems(settings: StackInput, raw: RawConfig, problems: MeaningProblems) -> None:
    """Each text of a key set in plain text (a string value, or a string or map key inside a list or map) that the
    redactor rewrites (`credential_shaped_paths`) is refused, the key named and the text never quoted.

    Such a key becomes a resource name, an ID or a setting that Nebius and Kubernetes show in plain text
    (docs/configuration.md, "Stack files, secrets and editor support"): `pulumi up` would deploy the token in clear
    while the plan, redacted, shows `[redacted]` in its place (attack4 #4: `sampleGpuImage: registry/cuda:ghp_...`,
    a GPU group's label). The check is the redactor's own, so what the plan would hide is what is refused, and nothing a plan quotes differs from what
    `pulumi up` sends. A key some rule has refused already (draDriverValues' own credential rule among them) is not
    refused twice.
    """
    given = settings.model_dump(mode="json")
    for key in sorted(set(raw.values) - set(raw.secret_keys)):
        name = config_key(key)
        if key not in given or any(re.match(rf"{re.escape(name)}(?![\w.-])", line) for line in problems.lines):
            continue
        for path in credential_shaped_paths(given[key], (key,)):
            inside = path.removeprefix(key)
            problems.add(
                name,
                f"{'holds at ' + inside.lstrip('.') + ' ' if inside else 'holds '}a value of a credential's shape "
                "(a token's form such as ghp_..., a URL's userinfo or query, a field named for a password; the plan would show it as [redacted], "
                "`pulumi up` would send it in plain text); this key cannot be a secret, so remove the credential",
            )


def existing_kubeconfig(settings: StackInput, raw: RawConfig, problems: ConfigProblems) -> str | None:
    """The kubeconfig of a cluster the stack does not create, checked for shape; its text is never quoted."""
    key = "existingClusterKubeconfig"
    text = getattr(settings, key)
    if not text:
        return None
    if key not in raw.secret_keys:
        problems.add(
            config_key(key),
            "is set in plain text, but it holds the credentials of a cluster: set it as a secret, "
            f"`pulumi config set {config_key(key)} --secret < kubeconfig` (and remove the plain value)",
        )
        return None
    if text == SECRET_PLACEHOLDER:
        return text
    try:
        document = parse_yaml(text, config_key(key))
    except InputError as unreadable:
        duplicate = unreadable.__cause__
        if isinstance(duplicate, DuplicateKeyError):
            # The key is not quoted: a line of a hand-edited secret could hold a credential where a key goes.
            lines = f"at line {duplicate.first[0]} and at line {duplicate.again[0]}"
            problems.add(
                config_key(key), f"gives a key twice, {lines}: give it once (the value is secret and not shown)"
            )
            return None
        document = None
    shape = {"clusters": list, "users": list, "contexts": list, "current-context": str}
    if not isinstance(document, dict) or any(not isinstance(document.get(k), t) for k, t in shape.items()):
        problems.add(
            config_key(key),
            "is not a kubeconfig: expected YAML with clusters, users and contexts lists and a current-context "
            "(the value is secret and not shown)",
        )
        return None
    return text
