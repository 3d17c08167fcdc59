"""Hostile input: every generated config either plans or is refused with messages naming keys; nothing else.

The property runs the real parser on thousands of configs made by putting hostile values into
every key of the dev stack and into every field of a GPU group and a claim template; a
smaller sample runs the whole program under the mock engine to show nothing is registered.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pulumi.runtime import rpc

from components.config import ConfigError, parse_stack_config
from components.config.raw import FIELD_KINDS
from components.config.reading import InputError, parse_yaml
from components.config.stack_file import load_stack_config, program_config
from components.input.stack import SECRET_ONLY_KEYS, StackInput
from tools.plan.mock_engine import run_program
from tools.plan.values import presentable

KEYS = list(StackInput.model_fields)
GROUP_FIELDS = [
    "name",
    "platform",
    "preset",
    "fixedNodeCount",
    "autoscaling",
    "driversPreset",
    "infiniband",
    "bootDiskSizeGib",
    "labels",
    "taints",
    "strategy",
    "autoRepair",
    "capacity",
]
# Fields inside the groups' nested maps, so hostile values reach every one of them too.
GROUP_PATHS = [
    ("strategy", "maxSurge"),
    ("strategy", "maxUnavailable"),
    ("strategy", "drainTimeout"),
    ("autoRepair", 0, "type"),
    ("autoRepair", 0, "status"),
    ("autoRepair", 0, "timeout"),
    ("autoRepair", 0, "disabled"),
    ("capacity", "type"),
    ("capacity", "reservationPolicy"),
    ("capacity", "capacityBlockGroupIds"),
    ("capacity", "maxPricePerGpuHour"),
]
TEMPLATE_PATHS = [
    ("name",),
    ("requests",),
    ("requests", 0, "name"),
    ("requests", 0, "exactly"),
    ("requests", 0, "exactly", "count"),
    ("requests", 0, "exactly", "deviceClassName"),
    ("requests", 0, "exactly", "selectors"),
    ("requests", 0, "exactly", "selectors", 0, "cel", "expression"),
    ("requests", 0, "exactly", "allocationMode"),
    ("requests", 0, "firstAvailable"),
    ("constraints",),
    ("config",),
]
# Fixed alphabets: no Unicode table to build inside Hypothesis's health-check window on a fresh clone.
TEXT = st.text(alphabet="aZ09-._/: \n\t١８é😀\"'[]{}", max_size=24)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
    st.sampled_from(
        [
            "1.34\n",
            "١.٣٤",
            "8gpu-128vcpu-1600gb\n",
            "nvidia.com/gpu",
            "NoSchedule",
            "All",
            "true",
            "",
            "x" * 300,
            "device.driver == 'gpu.nvidia.com'",
            "1 + 1",
            "gpu.nvidia.com",
            "kube-system",
            "system",
        ]
    ),
)
VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=6
)
TEMPLATE = {
    "name": "probe",
    "requests": [
        {
            "name": "gpu",
            "exactly": {
                "deviceClassName": "gpu.nvidia.com",
                "count": 1,
                "selectors": [
                    {"cel": {"expression": 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"'}}
                ],
            },
        }
    ],
}


def dev_config() -> dict[str, str]:
    return load_stack_config("dev")


def as_config_text(value: Any) -> str:
    """What the CLI hands the program: strings as they are, everything else as JSON text."""
    return value if isinstance(value, str) else json.dumps(value)


def put(document: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(head, int):
        items = list(document) if isinstance(document, list) else []
        while len(items) <= head:
            items.append({})
        items[head] = put(items[head], rest, value)
        return items
    base = dict(document) if isinstance(document, dict) else {}
    base[head] = put(base.get(head), rest, value)
    return base


def assert_refused_cleanly(error: BaseException) -> None:
    assert isinstance(error, ConfigError), f"{type(error).__name__}: {error}"
    lines = str(error).splitlines()[1:]
    assert lines and all(line.startswith("  - nebius-dra:") for line in lines), str(error)


def parse(config: dict[str, str]) -> None:
    try:
        parse_stack_config(program_config(config), "dev")
    except ConfigError as error:
        assert_refused_cleanly(error)


FUZZ = settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(key=st.sampled_from(KEYS), value=VALUES)
def test_any_value_of_any_key_plans_or_is_refused_by_key(key, value):
    parse({**dev_config(), f"nebius-dra:{key}": as_config_text(value)})


@FUZZ
@given(field=st.sampled_from(GROUP_FIELDS), value=VALUES)
def test_any_value_of_any_gpu_group_field_plans_or_is_refused_by_key(field, value):
    config = dev_config()
    groups = json.loads(config["nebius-dra:gpuNodeGroups"])
    groups[0][field] = value
    parse({**config, "nebius-dra:gpuNodeGroups": json.dumps(groups)})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(path=st.sampled_from(GROUP_PATHS), value=VALUES)
def test_any_value_in_a_gpu_groups_strategy_repair_or_capacity_plans_or_is_refused_by_key(path, value):
    config = dev_config()
    groups = json.loads(config["nebius-dra:gpuNodeGroups"])
    groups[0] = put(groups[0], path, value)
    parse({**config, "nebius-dra:gpuNodeGroups": json.dumps(groups)})


@FUZZ
@given(path=st.sampled_from(TEMPLATE_PATHS), value=VALUES)
def test_any_value_in_a_claim_template_plans_or_is_refused_by_key(path, value):
    template = put(TEMPLATE, path, value)
    parse({**dev_config(), "nebius-dra:userClaimTemplates": json.dumps([template])})


@settings(max_examples=40, deadline=None)
@given(key=st.sampled_from(KEYS), value=VALUES)
def test_the_program_registers_nothing_when_it_refuses(key, value):
    run = run_program("dev", config={**dev_config(), f"nebius-dra:{key}": as_config_text(value)})
    if run.error is not None:
        assert_refused_cleanly(run.error)
        assert run.resources == []


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("kubernetesVersion", "1.34\n", 'got "1.34\\n"; allowed: MAJOR.MINOR'),
        ("kubernetesVersion", "١.٣٤", "allowed: MAJOR.MINOR"),
        ("etcdClusterSize", "5", "got 5; allowed: 1 or 3"),
        ("systemNodeCount", "101", "got 101; expected a whole number from 1 to 100"),
        ("systemNodeCount", "1" + "0" * 400, "expected a whole number"),
        ("systemNodePreset", "4vcpu-16gb\n", 'got "4vcpu-16gb\\n"'),
        ("sampleGpuImage", "nvidia/cuda:13.1.1\n", "character 19 is U+000A; allowed: an image reference"),
        ("claimNamespace", "kube-system", "a namespace Kubernetes creates and owns"),
        ("claimNamespace", "nvidia-dra-driver-gpu", "the namespace of the DRA driver's release"),
        ("gpuProducts", '["NVIDIA 😀"]', "expected a GPU product name"),
        ("clusterName", "a" * 60, "gives Nebius names longer than 63 characters"),
        ("clusterName", "my.cluster", "expected a Nebius name"),
        ("draDriverValues", '{"a": NaN}', "numbers must be finite"),
        ("protected", "true", "is not a key this project declares"),
    ],
)
def test_hostile_values_are_refused_with_the_key(key, value, expected):
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(program_config({**dev_config(), f"nebius-dra:{key}": value}), "dev")
    assert f"nebius-dra:{key}" in str(refused.value)
    assert expected in str(refused.value)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"fixedNodeCount": float("nan")}, "numbers must be finite"),
        ({"fixedNodeCount": 10**20}, "expected a whole number from 1 to 100"),
        ({"name": "system"}, "would give the node group dra-dev-system"),
        ({"taints": [{"key": "a", "value": "", "effect": "NoSchedule"}]}, "Nebius requires a taint value"),
        (
            {
                "taints": [
                    {"key": "a", "value": "x", "effect": "NoSchedule"},
                    {"key": "a", "value": "y", "effect": "NoSchedule"},
                ]
            },
            "taints[1] repeats key a with effect NoSchedule",
        ),
        ({"labels": {"node-role.kubernetes.io/gpu": "x"}}, "Nebius ignores such node labels"),
        ({"infiniband": True}, "Nebius GPU clusters take only 8-GPU presets"),
        ({"autoscaling": {"min": 1, "max": 101}, "fixedNodeCount": None}, "autoscaling.max got 101"),
    ],
)
def test_hostile_gpu_groups_are_refused_with_the_entry(changes, expected):
    config = dev_config()
    group = {**json.loads(config["nebius-dra:gpuNodeGroups"])[0], **changes}
    group = {key: value for key, value in group.items() if value is not None}
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(program_config({**config, "nebius-dra:gpuNodeGroups": json.dumps([group])}), "dev")
    assert "nebius-dra:gpuNodeGroups" in str(refused.value)
    assert expected in str(refused.value)


def test_a_long_stack_name_without_cluster_name_is_refused_by_key():
    with pytest.raises(ConfigError, match="nebius-dra:clusterName: is empty, and the default dra-<stack>"):
        parse_stack_config(program_config(dev_config()), "s" * 70)


def test_a_secret_key_other_than_driver_values_is_refused():
    run = run_program("dev", config=dev_config(), secret_keys=["nebius-dra:parentId"])
    assert isinstance(run.error, ConfigError)
    assert "nebius-dra:parentId: is set as a secret" in str(run.error)
    assert run.resources == []


def test_secret_driver_values_stay_secret_in_the_helm_release():
    config = {
        **dev_config(),
        "nebius-dra:draDriverValues": json.dumps({"imagePullSecrets": [{"name": "ngc-key-5ecret"}]}),
    }
    run = run_program("dev", config=config, secret_keys=["nebius-dra:draDriverValues"])
    assert run.error is None, run.error
    [release] = [
        r
        for r in run.resources
        if r.type == "kubernetes:helm.sh/v3:Release" and r.inputs["chart"] == "nvidia-dra-driver-gpu"
    ]
    assert rpc.is_rpc_secret(release.inputs["values"])
    others = [r for r in run.resources if r.type == "kubernetes:helm.sh/v3:Release" and r is not release]
    assert others and not any(rpc.is_rpc_secret(r.inputs["values"]) for r in others), (
        "only the driver's values are secret"
    )
    assert "ngc-key-5ecret" not in json.dumps(presentable(release.inputs, {}))


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("a: !CANARYq7Zk x\n", "an unknown tag at line 1, column 4"),
        ("a: *CANARYq7Zk\n", "an undefined alias at line 1, column 4"),
        ("a: &CANARYq7Zk x\nb: &CANARYq7Zk y\n", "an anchor given twice at line 2, column 4"),
        ('a: "CANARYq7Zk\\q"\n', "an unknown escape character"),
        ("a: !CANARYq7Zk!x y\n", "an undefined tag handle at line 1, column 4"),
        ("a: `CANARYq7Zk\n", "a character that cannot start any token at line 1, column 4"),
    ],
)
def test_a_yaml_problem_names_its_kind_and_place_and_quotes_nothing_of_the_document(text, kind):
    """Issue 37 #3: `chartRepositoryPassword: !s3cret` was refused quoting the tag, the secret itself."""
    with pytest.raises(InputError) as refused:
        parse_yaml(text, "nebius-dra:chartRepositoryPassword")
    assert kind in str(refused.value) and "CANARY" not in str(refused.value), refused.value


# A GitHub token (github.blog 2021-04-05: `ghp_` and 36 base62 characters) with a canary in it.
GLUED_TOKEN = "ghp_CANARYq7Zk0123456789abcdefghijklmnop"
# The plain keys of attack4 #4 that took a token and planned, each value otherwise one the key accepts.
PLAIN_TOKEN_VALUES = [
    ("sampleGpuImage", f"registry.example.com/cuda:{GLUED_TOKEN}"),
    ("sampleGpuImage", f"registry.example.com/{GLUED_TOKEN.lower()}/cuda:12"),
    ("draDriverRoot", f"/run/{GLUED_TOKEN}"),
    ("nebiusProfile", GLUED_TOKEN),
    ("nebiusProfile", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJDQU5BUlkifQ.CANARYq7Zk"),
]


@pytest.mark.parametrize(("key", "value"), PLAIN_TOKEN_VALUES)
def test_a_credential_shaped_value_of_a_plain_key_is_refused_naming_the_key(key, value):
    """Attack4 #4: these planned with exit 0, the plan showing `[redacted]` where `pulumi up` deploys the token."""
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(program_config({**dev_config(), f"nebius-dra:{key}": value}), "dev")
    assert f"nebius-dra:{key}: holds a value of a credential's shape" in str(refused.value)
    assert "CANARY" not in str(refused.value)


@pytest.mark.parametrize(
    "change",
    [
        {"labels": {"team": GLUED_TOKEN}},
        {"labels": {GLUED_TOKEN: "x"}},
        {"taints": [{"key": GLUED_TOKEN, "value": "a", "effect": "NoSchedule"}]},
        {"taints": [{"key": "a", "value": f"x{GLUED_TOKEN}", "effect": "NoSchedule"}]},
    ],
    ids=["label-value", "label-key", "taint-key", "taint-value"],
)
def test_a_credential_shaped_label_or_taint_of_a_gpu_group_is_refused_naming_where(change):
    config = dev_config()
    groups = json.loads(config["nebius-dra:gpuNodeGroups"])
    groups[0] |= change
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(program_config({**config, "nebius-dra:gpuNodeGroups": json.dumps(groups)}), "dev")
    assert "nebius-dra:gpuNodeGroups: holds at [0]." in str(refused.value) and "CANARY" not in str(refused.value)


STRING_KEYS = [key for key, kind in FIELD_KINDS.items() if kind == "str" and key not in SECRET_ONLY_KEYS]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    key=st.sampled_from(STRING_KEYS), before=st.text(alphabet="abz09-./:", max_size=8), after=st.text("ab9", max_size=3)
)
def test_a_token_glued_into_any_plain_string_key_is_refused_by_key_and_never_quoted(key, before, after):
    """Whatever a plain string key's own rule is, a token inside its value (glued to the text before it too) is
    refused naming the key, and the token is never quoted (attack4 #1, #4)."""
    config = {**dev_config(), "nebius-dra:draDriverRepository": "https://charts.example.com/nvidia"}
    with pytest.raises(ConfigError) as refused:
        parse_stack_config(program_config({**config, f"nebius-dra:{key}": before + GLUED_TOKEN + after}), "dev")
    assert f"nebius-dra:{key}" in str(refused.value) and "CANARY" not in str(refused.value), refused.value


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("sampleGpuImage", "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04@sha256:" + "ab12" * 16),
        ("sampleGpuImage", "registry.example.com:5000/ml/cuda:12.4-runtime"),
        ("nebiusProfile", "task-queue-prod"),
        ("draDriverRoot", "/run/nvidia/driver"),
    ],
)
def test_a_plain_value_without_a_credential_is_not_refused_for_one(key, value):
    """No false refusal: a digest, a registry's port, a word holding `sk-`."""
    try:
        parse_stack_config(program_config({**dev_config(), f"nebius-dra:{key}": value}), "dev")
    except ConfigError as error:
        assert "credential's shape" not in str(error), error
