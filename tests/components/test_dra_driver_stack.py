"""The driver releases as the real program registers them: dev, prod, and mutated configs for the other modes."""

from __future__ import annotations

import json
from collections.abc import Iterable

import pytest
import yaml

from components.config.stack_file import PROJECT_DIR, declared_default, load_stack_config
from components.dra_constants import (
    GPU_OPERATOR_VERSION,
    KUBERNETES_OCI_REPOSITORY,
    LEGACY_CHART,
    NGC_REPOSITORY,
    OPERANDS_OFF_LABEL,
    RENAMED_CHART,
)
from tests.helpers import STACKS
from tests.kubernetes_manifests import HELM_RELEASE, releases
from tests.queue_configs import TEAMS, prod_with
from tests.stack_configs import mutated
from tools.plan.mock_engine import ProgramRun, RegisteredResource, run_program

NODE_GROUP = "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup"
GPU_NODE_GROUP_COMPONENT = "nebius-dra:nodes:GpuNodeGroup"
DRIVER_CHARTS = (LEGACY_CHART, RENAMED_CHART)


def driver_release(run: ProgramRun) -> RegisteredResource:
    (release,) = [r for chart in DRIVER_CHARTS for r in releases(run, chart)]
    return release


def stack_groups(stack_config, stack: str) -> list[dict]:
    return yaml.safe_load(stack_config(stack)["nebius-dra:gpuNodeGroups"])


def driverless(groups: Iterable[dict]) -> list[dict]:
    return [{key: value for key, value in group.items() if key != "driversPreset"} for group in groups]


@pytest.fixture(scope="module")
def operator_runs() -> dict[str, ProgramRun]:
    """dev and prod with every driversPreset removed: the GPU Operator path (prod adds InfiniBand)."""
    runs = {}
    for stack in STACKS:
        config = dict(load_stack_config(stack))
        config["nebius-dra:gpuNodeGroups"] = json.dumps(driverless(yaml.safe_load(config["nebius-dra:gpuNodeGroups"])))
        runs[stack] = run_program(stack, config=config)
        assert runs[stack].error is None, runs[stack].error
    return runs


def test_preset_stacks_install_the_legacy_chart_from_ngc_and_nothing_else(stack_runs):
    for stack, run in stack_runs.items():
        release = driver_release(run)
        inputs = release.inputs
        assert (inputs["chart"], inputs["version"]) == (LEGACY_CHART, "25.12.0"), stack
        assert inputs["repositoryOpts"] == {"repo": NGC_REPOSITORY}
        assert inputs["name"] == LEGACY_CHART
        assert inputs["namespace"] == "nvidia-dra-driver-gpu"
        assert inputs["createNamespace"] is True and inputs["atomic"] is True
        assert inputs["timeout"] >= 300
        assert inputs["values"]["nvidiaDriverRoot"] == "/"
        assert releases(run, "gpu-operator") == [] and releases(run, "network-operator") == []


def test_prod_driver_tolerates_the_gpu_taint_and_dev_has_none(dev_run, prod_run):
    assert driver_release(dev_run).inputs["values"]["kubeletPlugin"]["tolerations"] == []
    assert driver_release(prod_run).inputs["values"]["kubeletPlugin"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]


def test_every_release_is_pinned_and_uses_the_cluster_provider(stack_runs, operator_runs):
    for run in [*stack_runs.values(), *operator_runs.values()]:
        for release in run.of_type(HELM_RELEASE):
            assert release.inputs["version"][0].isdigit() or release.inputs["version"].startswith("v")
            assert release.provider.split("::")[-2].endswith("-access-provider")


def test_every_release_is_uninstalled_before_its_replacement_is_installed(stack_runs, operator_runs):
    """A namespace move replaces a release; created first, its install fails on the cluster-scoped objects the old
    release owns (Helm's "invalid ownership metadata"), so each release is registered with delete_before_replace."""
    queued = run_program("prod", config=prod_with({"teams": TEAMS}))
    assert queued.error is None, queued.error
    runs = [*stack_runs.values(), *operator_runs.values(), queued]
    found = {r.inputs["chart"].rsplit("/", 1)[-1]: r for run in runs for r in run.of_type(HELM_RELEASE)}
    assert {LEGACY_CHART, "gpu-operator", "network-operator", "dcgm-exporter", "kueue"} <= set(found)
    assert [chart for chart, release in found.items() if not release.delete_before_replace] == []


def test_driverless_groups_get_the_gpu_operator_first_and_no_device_plugin(operator_runs):
    for stack, run in operator_runs.items():
        (operator,) = releases(run, "gpu-operator")
        assert operator.inputs["version"] == GPU_OPERATOR_VERSION
        assert operator.inputs["repositoryOpts"] == {"repo": NGC_REPOSITORY}
        assert operator.inputs["values"]["devicePlugin"] == {"enabled": False}
        assert operator.inputs["values"]["cdi"] == {"enabled": True}
        assert operator.inputs["atomic"] is True
        driver = driver_release(run)
        assert operator.urn in driver.dependencies, stack
        assert driver.inputs["values"]["nvidiaDriverRoot"] == "/run/nvidia/driver"


def test_network_operator_only_when_a_driverless_group_uses_infiniband(stack_runs, operator_runs):
    assert releases(operator_runs["dev"], "network-operator") == []
    (network,) = releases(operator_runs["prod"], "network-operator")
    assert network.inputs["version"] == declared_default("networkOperatorVersion")
    assert all(releases(run, "network-operator") == [] for run in stack_runs.values())


def test_network_operator_installs_after_the_gpu_operator_whose_nfd_labels_the_nics(operator_runs):
    (gpu_operator,) = releases(operator_runs["prod"], "gpu-operator")
    (network,) = releases(operator_runs["prod"], "network-operator")
    assert gpu_operator.urn in network.dependencies


def test_sample_pods_wait_longer_when_the_operator_builds_the_driver(dev_run, operator_runs):
    (preinstalled,) = dev_run.of_type("kubernetes:core/v1:Pod")
    (operator_built,) = operator_runs["dev"].of_type("kubernetes:core/v1:Pod")
    assert preinstalled.create_timeout == ""
    assert operator_built.create_timeout == "30m"


def test_mixed_modes_are_refused_unless_the_operator_stays_off_the_preset_nodes(stack_config):
    groups = stack_groups(stack_config, "prod")
    groups[1].pop("driversPreset")
    groups[1]["infiniband"] = True
    refused = mutated(stack_config, "prod", groups)
    assert refused.resources == []
    assert "nebius-dra:gpuNodeGroups: groups h200-train have a driversPreset" in str(refused.error)
    assert OPERANDS_OFF_LABEL in str(refused.error)
    assert "nebius-dra:draDriverRoot: is required when some GPU groups have a driversPreset" in str(refused.error)

    groups[0]["labels"][OPERANDS_OFF_LABEL] = "false"
    allowed = mutated(stack_config, "prod", groups, draDriverRoot="/run/nvidia/driver")
    assert allowed.error is None, allowed.error
    assert len(releases(allowed, "gpu-operator")) == 1 and len(releases(allowed, "network-operator")) == 1


def test_mixed_modes_nfd_tolerates_every_gpu_group_and_operands_only_the_operator_groups(stack_config):
    """The Operator resets nvidia.com/gpu.present on any node NFD's worker does not reach, preset nodes included."""
    groups = stack_groups(stack_config, "prod")
    groups[0]["labels"][OPERANDS_OFF_LABEL] = "false"
    groups[0]["taints"] = [{"key": "preset-only", "value": "h200", "effect": "NoExecute"}]
    groups[1].pop("driversPreset")
    run = mutated(stack_config, "prod", groups, draDriverRoot="/run/nvidia/driver")
    assert run.error is None, run.error
    (operator,) = releases(run, "gpu-operator")
    preset_toleration = {"key": "preset-only", "operator": "Equal", "value": "h200", "effect": "NoExecute"}
    operator_toleration = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    values = operator.inputs["values"]
    assert values["node-feature-discovery"]["worker"]["tolerations"] == [operator_toleration, preset_toleration]
    assert values["daemonsets"]["tolerations"] == [operator_toleration]
    # GPU Operator v26.7.0, the default since issue 26, drains the DRA kubelet plugin itself: no eviction workaround.
    assert values["driver"] == {"enabled": True}


@pytest.mark.parametrize(
    ("repository", "chart", "repo_opts"),
    [
        # Changed in issue 26: the renamed line's default repository is its own OCI registry, no longer NGC.
        ("", f"{KUBERNETES_OCI_REPOSITORY}/{RENAMED_CHART}", None),
        (NGC_REPOSITORY, RENAMED_CHART, {"repo": NGC_REPOSITORY}),
        (KUBERNETES_OCI_REPOSITORY, f"{KUBERNETES_OCI_REPOSITORY}/{RENAMED_CHART}", None),
    ],
)
def test_renamed_chart_installs_from_ngc_or_oci_under_the_old_names(stack_config, repository, chart, repo_opts):
    run = mutated(stack_config, "dev", draDriverChart=RENAMED_CHART, draDriverRepository=repository)
    assert run.error is None, run.error
    release = driver_release(run)
    assert (release.inputs["chart"], release.inputs["version"]) == (chart, "0.4.1")
    assert release.inputs.get("repositoryOpts") == repo_opts
    assert release.inputs["name"] == LEGACY_CHART
    assert release.inputs["values"]["nameOverride"] == LEGACY_CHART


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"draDriverNamespace": "default"}, 'nebius-dra:draDriverNamespace: got "default"'),
        (
            {"draDriverNamespace": "GPU_Drivers"},
            'nebius-dra:draDriverNamespace: got "GPU_Drivers"; expected a DNS label',
        ),
        (
            {"draDriverChart": "k8s-dra-driver"},
            'nebius-dra:draDriverChart: got "k8s-dra-driver"; did you mean nvidia-dra-driver-gpu?; allowed: dra-driver-nvidia-gpu (default) or nvidia-dra-driver-gpu',
        ),
        (
            {"draDriverVersion": "25.8.1"},
            'nebius-dra:draDriverVersion: got "25.8.1" for chart nvidia-dra-driver-gpu; allowed: 25.12.0',
        ),
        (
            {"draDriverChart": RENAMED_CHART, "draDriverVersion": "0.5.0"},
            'nebius-dra:draDriverVersion: got "0.5.0" for chart dra-driver-nvidia-gpu; allowed: 0.4.x',
        ),
        (
            {"draDriverRepository": KUBERNETES_OCI_REPOSITORY},
            f'nebius-dra:draDriverRepository: got "{KUBERNETES_OCI_REPOSITORY}" for chart nvidia-dra-driver-gpu; allowed: {NGC_REPOSITORY}',
        ),
        (
            {"draDriverRoot": "run/nvidia/driver"},
            'nebius-dra:draDriverRoot: got "run/nvidia/driver"; expected an absolute path',
        ),
        ({"draComputeDomains": "yes"}, 'nebius-dra:draComputeDomains: got "yes"; expected true or false'),
        (
            {"gpuOperatorVersion": "latest"},
            'nebius-dra:gpuOperatorVersion: got "latest"; expected an exact chart version',
        ),
        (
            {"draDriverValues": json.dumps({"resources": {"gpus": {"enabled": False}}})},
            "nebius-dra:draDriverValues: resources.gpus.enabled: the override sets it to false",
        ),
    ],
)
def test_bad_driver_settings_stop_the_program_before_any_resource(stack_config, settings, expected):
    run = mutated(stack_config, "dev", **settings)
    assert run.resources == []
    assert expected in str(run.error)


def reachable(run: ProgramRun, start: RegisteredResource) -> set[str]:
    """Every URN `start` waits for: dependencies, property dependencies and its provider, transitively."""
    by_urn = run.by_urn()
    seen: set[str] = set()
    pending = [start.urn]
    while pending:
        resource = by_urn.get(pending.pop())
        if resource is None:
            continue
        edges = [*resource.dependencies, *(urn for urns in resource.property_dependencies.values() for urn in urns)]
        if resource.provider:
            edges.append(resource.provider.rsplit("::", 1)[0])
        for urn in edges:
            if urn not in seen:
                seen.add(urn)
                pending.append(urn)
    return seen


def gpu_node_group_urns(run: ProgramRun) -> set[str]:
    components = {r.urn for r in run.resources if r.type == GPU_NODE_GROUP_COMPONENT}
    return {r.urn for r in run.resources if r.type == NODE_GROUP and r.parent in components} | components


def test_no_helm_release_waits_for_a_gpu_node_group(stack_runs, operator_runs):
    for run in [*stack_runs.values(), *operator_runs.values()]:
        gpu_groups = gpu_node_group_urns(run)
        assert gpu_groups, run.stack
        for release in run.of_type(HELM_RELEASE):
            waits_for = reachable(run, release)
            assert not waits_for & gpu_groups, f"{run.stack}: {release.name} waits for a GPU node group"
            assert any(urn.endswith("-system-nodes") for urn in waits_for), (
                f"{release.name} must wait for the system nodes"
            )


def test_the_graph_walk_finds_a_dependency_through_another_resource(prod_run):
    """The walk must see a release that reaches a GPU group through an intermediate resource."""
    (gpu_group, *_) = sorted(
        gpu_node_group_urns(prod_run) - {r.urn for r in prod_run.resources if r.type == GPU_NODE_GROUP_COMPONENT}
    )
    release = driver_release(prod_run)
    middle = RegisteredResource(
        urn="urn:middle",
        type="test:index:Middle",
        name="middle",
        custom=True,
        inputs={},
        parent="",
        dependencies=[],
        property_dependencies={"x": [gpu_group]},
        provider="",
        protect=False,
    )
    looped = RegisteredResource(**{**release.__dict__, "dependencies": [*release.dependencies, middle.urn]})
    resources = [looped if r.urn == release.urn else r for r in prod_run.resources]
    run = ProgramRun(prod_run.stack, prod_run.config, [*resources, middle], {}, set(), None)
    assert gpu_group in reachable(run, looped)
    assert gpu_group not in reachable(prod_run, release)


def test_a_stack_file_without_a_chart_gets_the_kubernetes_sigs_line_while_dev_and_prod_name_theirs(tmp_path):
    """Issue 26: new stacks default to dra-driver-nvidia-gpu 0.4.1 from registry.k8s.io; dev and prod name 25.12.0's line."""
    (tmp_path / "Pulumi.yaml").write_text((PROJECT_DIR / "Pulumi.yaml").read_text())
    dev_file = yaml.safe_load((PROJECT_DIR / "Pulumi.dev.yaml").read_text())
    assert dev_file["config"].pop("nebius-dra:draDriverChart") == LEGACY_CHART
    assert (
        yaml.safe_load((PROJECT_DIR / "Pulumi.prod.yaml").read_text())["config"]["nebius-dra:draDriverChart"]
        == LEGACY_CHART
    )
    (tmp_path / "Pulumi.new.yaml").write_text(yaml.safe_dump(dev_file))
    run = run_program("new", config=load_stack_config("new", tmp_path))
    assert run.error is None, run.error
    release = driver_release(run)
    assert (release.inputs["chart"], release.inputs["version"]) == (
        f"{KUBERNETES_OCI_REPOSITORY}/{RENAMED_CHART}",
        "0.4.1",
    )
    assert release.inputs["values"]["nameOverride"] == LEGACY_CHART
