"""The DRA driver's Helm values, built directly from parsed config: guarded keys, overrides, chart keys."""

from __future__ import annotations

import json
from typing import Any

import kubernetes_validate
import pytest
from hypothesis import given
from hypothesis import strategies as st

from components.config.chart_keys import keys_file
from components.config.driver import GUARD_REASONS
from components.config.errors import ConfigError
from components.config.stack_file import load_stack_config
from components.dra_constants import (
    GPU_OPERATOR_VERSION,
    KUBELET_PLUGIN_LABEL,
    KUBERNETES_OCI_REPOSITORY,
    LEGACY_CHART,
    RENAMED_CHART,
    SYSTEM_ROLE_LABEL,
)
from components.labels import kubelet_plugin_node_selector, system_node_labels, tolerations_for
from components.merge import deep_merge
from components.model import StackConfig, Taint
from components.values.dra_driver import dra_driver_values
from components.values.gpu_operator import gpu_operator_values, network_operator_values
from tests.helm_values import leaf_paths, undefined_keys
from tests.helpers import TESTS
from tests.stack_configs import parsed, with_compute_domains, without_presets

SYSTEM_SELECTOR = system_node_labels()


def values_of(config: StackConfig) -> dict[str, Any]:
    taints = [taint for group in config.gpu_node_groups for taint in group.taints]
    return dra_driver_values(config.driver, taints, SYSTEM_SELECTOR)


def chart_keys(chart: str, version: str) -> set[str]:
    """The key list kept for a chart line; 0.4.x patch releases are checked against 0.4.1's keys."""
    pinned = "0.4.1" if chart == RENAMED_CHART else version
    lines = keys_file(chart, pinned).read_text().splitlines()
    return {line for line in lines if line and not line.startswith("#")}


def refusal(stack: str = "dev", **overrides: Any) -> str:
    with pytest.raises(ConfigError) as raised:
        parsed(stack, **overrides)
    return str(raised.value)


def test_preinstalled_nodes_read_the_driver_from_the_host_root():
    values = values_of(parsed("prod"))
    assert values["gpuResourcesEnabledOverride"] is True
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": False}}
    assert values["resourceApiVersion"] == "resource.k8s.io/v1"
    assert values["nvidiaDriverRoot"] == "/"
    assert values["kubeletPlugin"]["nodeSelector"] == {KUBELET_PLUGIN_LABEL: "true"}
    assert values["kubeletPlugin"]["tolerations"] == [
        {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
    assert "nameOverride" not in values and "controller" not in values


def test_operator_nodes_read_the_driver_the_operator_installs():
    config = parsed("dev", gpuNodeGroups=without_presets("dev"))
    assert values_of(config)["nvidiaDriverRoot"] == "/run/nvidia/driver"
    assert (
        values_of(parsed("dev", gpuNodeGroups=without_presets("dev"), draDriverRoot="/opt/nvidia"))["nvidiaDriverRoot"]
        == "/opt/nvidia"
    )


def test_kubelet_plugin_tolerates_every_gpu_group_taint():
    groups = without_presets("prod")
    groups[1]["taints"] = [{"key": "burst", "value": "yes", "effect": "NoExecute"}]
    config = parsed("prod", gpuNodeGroups=groups)
    assert values_of(config)["kubeletPlugin"]["tolerations"] == tolerations_for(
        [Taint("nvidia.com/gpu", "true", "NoSchedule"), Taint("burst", "yes", "NoExecute")]
    )


def test_renamed_chart_keeps_the_old_object_names():
    config = parsed("dev", draDriverChart=RENAMED_CHART)
    assert values_of(config)["nameOverride"] == LEGACY_CHART


def test_user_values_merge_last_without_dropping_stack_values():
    config = parsed(
        "dev", draDriverValues={"logVerbosity": "6", "kubeletPlugin": {"priorityClassName": "gpu-critical"}}
    )
    values = values_of(config)
    assert values["logVerbosity"] == "6"
    assert values["kubeletPlugin"]["priorityClassName"] == "gpu-critical"
    assert values["kubeletPlugin"]["nodeSelector"] == {KUBELET_PLUGIN_LABEL: "true"}


def test_an_override_equal_to_the_guarded_value_is_accepted():
    assert parsed("dev", draDriverValues={"resources": {"gpus": {"enabled": True}}}).driver.value_overrides


GUARDED_OVERRIDES = {
    "gpuResourcesEnabledOverride": {"gpuResourcesEnabledOverride": False},
    "resources.gpus.enabled": {"resources": {"gpus": {"enabled": False}}},
    "resources.computeDomains.enabled": {"resources": {"computeDomains": {"enabled": True}}},
    "resourceApiVersion": {"resourceApiVersion": "resource.k8s.io/v1beta1"},
    "nvidiaDriverRoot": {"nvidiaDriverRoot": "/run/nvidia/driver"},
    "nameOverride": {"nameOverride": "my-driver"},
    "allowDefaultNamespace": {"allowDefaultNamespace": True},
    "kubeletPlugin.nodeSelector": {"kubeletPlugin": {"nodeSelector": {"gpu": "yes"}}},
    "kubeletPlugin.tolerations": {"kubeletPlugin": {"tolerations": []}},
}


def test_every_guarded_key_has_a_refusal_case():
    assert set(GUARDED_OVERRIDES) == set(GUARD_REASONS)


@pytest.mark.parametrize("path", sorted(GUARDED_OVERRIDES))
def test_every_guarded_override_is_refused_with_its_path(path):
    message = refusal("prod", draDriverValues=GUARDED_OVERRIDES[path])
    assert f"nebius-dra:draDriverValues: {path}: the override" in message
    assert message.count("draDriverValues") == 1


def test_replacing_a_guarded_map_whole_is_refused():
    message = refusal("dev", draDriverValues={"resources": None})
    assert "resources.gpus.enabled: the override removes it" in message
    assert "resources.computeDomains.enabled: the override removes it" in message


def test_overrides_must_be_a_map():
    assert "nebius-dra:draDriverValues: got [1]; expected a map of chart values" in refusal("dev", draDriverValues=[1])


@pytest.mark.parametrize("chart", [LEGACY_CHART, RENAMED_CHART])
def test_compute_domain_controller_runs_on_the_system_nodes(chart):
    controller = values_of(parsed("dev", draDriverChart=chart, **with_compute_domains("dev")))["controller"]
    assert controller["nodeSelector"] == SYSTEM_SELECTOR
    affinity = controller.get("affinity")
    if chart == LEGACY_CHART:
        (term,) = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert term == {"matchExpressions": [{"key": SYSTEM_ROLE_LABEL, "operator": "In", "values": ["system"]}]}
    else:
        assert affinity is None


CHART_CASES = [
    {"draDriverChart": LEGACY_CHART},
    {"draDriverChart": LEGACY_CHART, "draComputeDomains": "true"},
    {"draDriverChart": RENAMED_CHART},
    {"draDriverChart": RENAMED_CHART, "draComputeDomains": "true", "draDriverRepository": KUBERNETES_OCI_REPOSITORY},
    {"draDriverChart": RENAMED_CHART, "draDriverVersion": "0.4.1", "gpuNodeGroups": "operator"},
]


@pytest.mark.parametrize(
    "case", CHART_CASES, ids=lambda case: "-".join(str(v).rsplit("/", 1)[-1] for v in case.values())
)
def test_rendered_values_use_only_keys_the_pinned_chart_defines(case):
    settings = dict(case)
    if settings.get("gpuNodeGroups") == "operator":
        settings["gpuNodeGroups"] = without_presets("prod")
    if settings.get("draComputeDomains"):
        settings.update(with_compute_domains("prod"))
    config = parsed("prod", **settings)
    keys = chart_keys(config.driver.chart, config.driver.version)
    assert undefined_keys(values_of(config), keys) == []


def test_the_key_check_flags_keys_the_chart_does_not_define():
    keys = chart_keys(LEGACY_CHART, "25.12.0")
    values = {"kubeletPlugin": {"nodeSelector": {"any/label": "x"}, "tolerance": []}, "controller": {"replicas": 2}}
    assert undefined_keys(values, keys) == ["kubeletPlugin.tolerance", "controller.replicas"]
    assert "controller.replicas" in chart_keys(RENAMED_CHART, "0.4.1")


def test_kubernetes_fragments_in_the_values_are_valid_pod_fields():
    """Tolerations, selectors and affinity go into pod specs unchanged, so they must validate as pod fields."""
    config = parsed("prod", **with_compute_domains("prod"))
    values = values_of(config)
    pod_spec = {
        "containers": [{"name": "probe", "image": "registry.k8s.io/pause:3.10"}],
        "nodeSelector": values["kubeletPlugin"]["nodeSelector"],
        "tolerations": values["kubeletPlugin"]["tolerations"]
        + gpu_operator_values(config.gpu_node_groups[0].taints, config.gpu_node_groups[1].taints)[
            "node-feature-discovery"
        ]["worker"]["tolerations"],
        "affinity": values["controller"]["affinity"],
    }
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe"}, "spec": pod_spec}
    kubernetes_validate.validate(pod, "1.34", strict=True)


# The value paths the stack sets on NVIDIA's Operators, each checked against that chart's values.yaml: the GPU
# Operator's key lists in tests/data/ (read from the real archives of v25.10.1 and v26.7.0), network-operator
# 25.7.0 (deployment/network-operator) here.
GPU_OPERATOR_VERSIONS = ("v25.10.1", "v26.7.0")
DATA = TESTS / "data"
NETWORK_OPERATOR_KEYS = {"nfd.enabled", "nfd.deployNodeFeatureRules"}


GPU_TAINT = Taint("nvidia.com/gpu", "true", "NoSchedule")


def test_gpu_operator_leaves_the_gpus_to_the_dra_driver():
    values = gpu_operator_values([GPU_TAINT], [GPU_TAINT])
    assert values["devicePlugin"] == {"enabled": False}
    assert values["cdi"] == {"enabled": True}
    assert values["driver"]["enabled"] is True
    assert values["daemonsets"]["tolerations"] == tolerations_for([GPU_TAINT])


def test_driver_upgrades_evict_the_dra_kubelet_plugin_by_its_node_label_before_operator_26_7():
    """NVIDIA's DRA guide: the driver manager evicts the kubelet plugin only when told the plugin's node label."""
    env = gpu_operator_values([], [], "v25.10.1")["driver"]["manager"]["env"]
    assert env == [{"name": "NODE_LABEL_FOR_GPU_POD_EVICTION", "value": KUBELET_PLUGIN_LABEL}]
    assert kubelet_plugin_node_selector() == {KUBELET_PLUGIN_LABEL: "true"}


def test_node_feature_discovery_reaches_every_gpu_node_and_operands_only_the_operator_groups():
    """The Operator marks a node without NFD's PCI labels as GPU-less (gpu.present=false), preset nodes included."""
    operator = [Taint("dedicated", "training", "NoSchedule"), Taint("burst", "yes", "NoExecute")]
    preset = [Taint("preset", "h200", "PreferNoSchedule")]
    values = gpu_operator_values(operator, [*operator, *preset])
    assert values["node-feature-discovery"]["worker"]["tolerations"] == tolerations_for([*operator, *preset])
    assert values["daemonsets"]["tolerations"] == tolerations_for(operator)


def test_network_operator_creates_no_object_whose_type_another_release_brings():
    """NodeFeatureRule's CRD comes with the GPU Operator's NFD, which the Network Operator does not wait for."""
    assert network_operator_values() == {"nfd": {"enabled": False, "deployNodeFeatureRules": False}}


def test_operator_26_7_drains_the_dra_kubelet_plugin_itself_so_the_workaround_is_left_out():
    """GPU Operator v26.7.0's k8s-driver-manager v0.12.0 drains the plugin across driver reloads (k8s-driver-manager PR #203)."""
    assert GPU_OPERATOR_VERSION == "v26.7.0"
    assert gpu_operator_values([], [])["driver"] == {"enabled": True}
    assert gpu_operator_values([], [], "v26.8.1")["driver"] == {"enabled": True}
    assert "manager" in gpu_operator_values([], [], "v26.3.0")["driver"]


@pytest.mark.parametrize("version", GPU_OPERATOR_VERSIONS)
def test_operator_values_use_only_keys_their_charts_define(version):
    keys = {
        line for line in (DATA / f"gpu-operator-{version}.keys").read_text().splitlines() if line and line[0] != "#"
    }
    assert leaf_paths(gpu_operator_values([GPU_TAINT], [GPU_TAINT], version)) <= keys
    assert leaf_paths(network_operator_values()) <= NETWORK_OPERATOR_KEYS
    assert leaf_paths({"daemonsets": {"toleration": []}}) - keys == {"daemonsets.toleration"}


plain = st.one_of(
    st.integers(), st.text(alphabet="ab-._é", max_size=3), st.booleans(), st.none(), st.lists(st.integers(), max_size=2)
)
trees = st.recursive(plain, lambda inner: st.dictionaries(st.sampled_from("abc"), inner, max_size=3), max_leaves=8)
maps = st.dictionaries(st.sampled_from("abc"), trees, max_size=3)


@given(maps, maps)
def test_deep_merge_keeps_base_keys_and_lets_every_override_leaf_win(base, override):
    merged = deep_merge(base, override)
    assert set(merged) == set(base) | set(override)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            assert merged[key] == deep_merge(base[key], value)
        else:
            assert merged[key] == value
    for key in set(base) - set(override):
        assert merged[key] == base[key]


@pytest.mark.parametrize(
    ("gate", "needs"), [("NVMLDeviceHealthCheck", "DRADeviceTaints"), ("DynamicMIG", "DRAPartitionableDevices")]
)
def test_driver_gates_that_publish_what_1_34_cannot_store_wait_for_1_36(gate, needs):
    from components.config import ConfigError, parse_stack_config
    from components.config.stack_file import program_config

    values = json.dumps({"featureGates": {gate: True}})
    config = {**load_stack_config("dev"), "nebius-dra:draDriverValues": values}
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(program_config(config), "dev")
    message = str(refused.value)
    assert f"nebius-dra:draDriverValues: featureGates.{gate}: true needs the Kubernetes feature gate {needs}" in message
    assert 'set kubernetesVersion to "1.36"' in message
    on_1_36 = parse_stack_config(program_config({**config, "nebius-dra:kubernetesVersion": "1.36"}), "dev")
    assert on_1_36.driver.value_overrides["featureGates"] == {gate: True}
