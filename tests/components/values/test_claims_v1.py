"""User claim templates speak the resource.k8s.io/v1 request shape that the stack's Kubernetes minor enables by default.

The template shapes below are those of the NVIDIA DRA driver's own v1 examples
(kubernetes-sigs/dra-driver-nvidia-gpu demo/specs/quickstart/v1 and demo/specs/consumable-shares,
read at commit 95932046): each is accepted, or refused only for a reason that names the removed
attribute or the feature gate it needs.
"""

from __future__ import annotations

import json

import kubernetes_validate
import pytest

from components.config import ConfigError
from components.dra_constants import ADMIN_ACCESS_LABEL
from components.values.claim_templates import template_spec_args, user_template_spec
from tools.plan.mock_engine import run_program

USER_KEY = "nebius-dra:userClaimTemplates"
GPU = "gpu.nvidia.com"
GPU_CONFIG = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}
NVIDIA_V1_EXAMPLES = {
    "gpu-test1": ({"requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU}}]}, None),
    "gpu-test-mps": (
        {
            "requests": [{"name": "mps-gpu", "exactly": {"deviceClassName": GPU}}],
            "config": [
                {
                    "requests": ["mps-gpu"],
                    "opaque": {"driver": GPU, "parameters": {**GPU_CONFIG, "sharing": {"strategy": "MPS"}}},
                }
            ],
        },
        None,
    ),
    "gpu-test4": (
        {
            "requests": [
                {
                    "name": f"mig-{i}",
                    "exactly": {
                        "deviceClassName": "mig.nvidia.com",
                        "selectors": [
                            {"cel": {"expression": "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'"}}
                        ],
                    },
                }
                for i in range(2)
            ],
            "constraints": [{"requests": [], "matchAttribute": "gpu.nvidia.com/parentUUID"}],
        },
        None,
    ),
    "gpu-test5": (
        {
            "requests": [
                {"name": "ts-gpu", "exactly": {"deviceClassName": GPU}},
                {"name": "mps-gpu", "exactly": {"deviceClassName": GPU}},
            ],
            "config": [
                {
                    "requests": ["ts-gpu"],
                    "opaque": {"driver": GPU, "parameters": {**GPU_CONFIG, "sharing": {"strategy": "TimeSlicing"}}},
                },
                {
                    "requests": ["mps-gpu"],
                    "opaque": {"driver": GPU, "parameters": {**GPU_CONFIG, "sharing": {"strategy": "MPS"}}},
                },
            ],
        },
        # Two GPUs from one node; dev's node has one.
        "a claim's devices all come from one node",
    ),
    "gpu-test6": (
        {
            "requests": [
                {
                    "name": "gpu",
                    "exactly": {
                        "deviceClassName": GPU,
                        "selectors": [
                            {
                                "cel": {
                                    "expression": "device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$') && (device.attributes['gpu.nvidia.com'].index == 0 || device.attributes['gpu.nvidia.com'].index == 2)"
                                }
                            }
                        ],
                    },
                }
            ]
        },
        "index",
    ),
    "gpu-test-vfiopci": (
        {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "vfio.gpu.nvidia.com"}}]},
        "PassthroughSupport",
    ),
    "memory-sharing": (
        {
            "requests": [
                {"name": "gpu", "exactly": {"deviceClassName": GPU, "capacity": {"requests": {"memory": "4Gi"}}}}
            ]
        },
        "DRAConsumableCapacity",
    ),
}


def dev_config(*templates: dict, **extra: str) -> dict[str, str]:
    from components.config.stack_file import load_stack_config

    return {**load_stack_config("dev"), USER_KEY: json.dumps(list(templates)), **extra}


def plan(config: dict[str, str]):
    run = run_program("dev", config=config)
    return run


@pytest.mark.parametrize("name", list(NVIDIA_V1_EXAMPLES))
def test_nvidia_v1_examples_are_accepted_or_refused_naming_the_attribute_or_gate(name):
    body, reason = NVIDIA_V1_EXAMPLES[name]
    run = plan(dev_config({"name": name, **body}))
    if reason is None:
        assert run.error is None, run.error
        [template] = [r for r in run.resources if r.type.endswith("ResourceClaimTemplate") and r.name.endswith(name)]
        assert template.inputs["spec"]["spec"]["devices"]["requests"]
    else:
        assert isinstance(run.error, ConfigError), run.error
        assert reason in str(run.error)
        assert run.resources == []


def test_vfio_is_accepted_when_the_driver_enables_passthrough():
    body, _ = NVIDIA_V1_EXAMPLES["gpu-test-vfiopci"]
    config = dev_config(
        {"name": "vfio", **body},
        **{"nebius-dra:draDriverValues": json.dumps({"featureGates": {"PassthroughSupport": True}})},
    )
    assert plan(config).error is None


FIRST_AVAILABLE = {
    "name": "gpu-any",
    "requests": [
        {
            "name": "gpu",
            "firstAvailable": [
                {
                    "name": "h200",
                    "deviceClassName": GPU,
                    "selectors": [
                        {"cel": {"expression": 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"'}}
                    ],
                },
                {"name": "any", "deviceClassName": GPU},
            ],
        }
    ],
    "config": [
        {
            "requests": ["gpu/h200"],
            "opaque": {"driver": GPU, "parameters": {**GPU_CONFIG, "sharing": {"strategy": "TimeSlicing"}}},
        }
    ],
}


def test_first_available_plans_as_a_prioritized_list_and_validates_strictly():
    run = plan(dev_config(FIRST_AVAILABLE))
    assert run.error is None, run.error
    [template] = [r for r in run.resources if r.type.endswith("ResourceClaimTemplate") and r.name.endswith("gpu-any")]
    request = template.inputs["spec"]["spec"]["devices"]["requests"][0]
    assert [sub["name"] for sub in request["firstAvailable"]] == ["h200", "any"]
    assert "exactly" not in request
    manifest = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "gpu-any", "namespace": "x"},
        **template.inputs,
    }
    kubernetes_validate.validate(manifest, "1.34.0", strict=True)


def test_admin_access_labels_the_claim_namespace():
    admin = {
        "name": "monitor",
        "requests": [
            {"name": "gpu", "exactly": {"deviceClassName": GPU, "allocationMode": "All", "adminAccess": True}}
        ],
    }
    run = plan(dev_config(admin))
    assert run.error is None, run.error
    [namespace] = [r for r in run.resources if r.type == "kubernetes:core/v1:Namespace"]
    assert namespace.inputs["metadata"]["labels"][ADMIN_ACCESS_LABEL] == "true"
    [template] = [r for r in run.resources if r.type.endswith("ResourceClaimTemplate") and r.name.endswith("monitor")]
    assert template.inputs["spec"]["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] is True


def test_without_admin_access_the_namespace_carries_no_admin_label():
    run = plan(dev_config(FIRST_AVAILABLE))
    [namespace] = [r for r in run.resources if r.type == "kubernetes:core/v1:Namespace"]
    assert ADMIN_ACCESS_LABEL not in namespace.inputs["metadata"]["labels"]


@pytest.mark.parametrize(
    ("request_body", "expected"),
    [
        (
            {"name": "gpu", "exactly": {"deviceClassName": GPU, "tolerations": [{"key": "x", "operator": "Exists"}]}},
            "needs the Kubernetes feature gate DRADeviceTaints, Alpha and off by default in 1.34, which Nebius managed "
            'clusters do not enable; it is Beta and on by default from 1.36: set kubernetesVersion to "1.36" or later',
        ),
        (
            {
                "name": "gpu",
                "firstAvailable": [{"name": "a", "deviceClassName": GPU, "capacity": {"requests": {"memory": "1Gi"}}}],
            },
            "firstAvailable[0] (a).capacity needs the Kubernetes feature gate DRAConsumableCapacity",
        ),
        ({"name": "gpu"}, "set exactly one of exactly: {deviceClassName, ...} or firstAvailable"),
        (
            {
                "name": "gpu",
                "exactly": {"deviceClassName": GPU},
                "firstAvailable": [{"name": "a", "deviceClassName": GPU}],
            },
            "got both",
        ),
        ({"name": "gpu", "firstAvailable": []}, "firstAvailable got []"),
        (
            {"name": "gpu", "firstAvailable": [{"name": f"s{i}", "deviceClassName": GPU} for i in range(9)]},
            "firstAvailable got",
        ),
        (
            {"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": GPU, "adminAccess": True}]},
            'unknown field(s) "adminAccess"',
        ),
        (
            {
                "name": "gpu",
                "firstAvailable": [{"name": "a", "deviceClassName": GPU}, {"name": "a", "deviceClassName": GPU}],
            },
            'firstAvailable names ["a", "a"] repeat',
        ),
        (
            {"name": "gpu", "firstAvailable": [{"name": "a", "deviceClassName": "gpu.example.com"}]},
            'deviceClassName "gpu.example.com" is not a DeviceClass',
        ),
        (
            {"name": "gpu", "exactly": {"deviceClassName": GPU, "sharing": True}},
            'unknown field(s) "sharing"; allowed: deviceClassName',
        ),
    ],
)
def test_v1_requests_are_refused_with_the_reason(request_body, expected):
    run = plan(dev_config({"name": "probe", "requests": [request_body]}))
    assert isinstance(run.error, ConfigError), run.error
    assert "nebius-dra:userClaimTemplates entry probe" in str(run.error)
    assert expected in str(run.error)


def test_constraints_and_config_name_subrequests_and_unknown_ones_are_refused():
    template = {
        **FIRST_AVAILABLE,
        "config": [{"requests": ["gpu/h100"], "opaque": {"driver": GPU, "parameters": GPU_CONFIG}}],
    }
    run = plan(dev_config(template))
    assert isinstance(run.error, ConfigError)
    assert (
        "config[0].requests names gpu/h100, which this template does not request; it may name: gpu, gpu/h200, gpu/any"
        in str(run.error)
    )


def test_distinct_attribute_constraint_names_its_gate():
    template = {
        "name": "probe",
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU, "count": 2}}],
        "constraints": [{"distinctAttribute": "gpu.nvidia.com/uuid"}],
    }
    run = plan(dev_config(template))
    assert isinstance(run.error, ConfigError)
    assert "constraints[0].distinctAttribute needs the Kubernetes feature gate DRAConsumableCapacity" in str(run.error)


def test_first_available_translates_to_typed_args_without_losing_a_field():
    from components.config import parse_stack_config
    from components.config.stack_file import program_config

    config = parse_stack_config(program_config(dev_config(FIRST_AVAILABLE)), "dev")
    spec = user_template_spec(config.claims.user_templates[0])
    args = template_spec_args(spec)
    request = args.spec.devices.requests[0]
    assert [sub.name for sub in request.first_available] == ["h200", "any"]


IB, RDMA = "ib.networking.nebius.ai", "rdma.networking.nebius.ai"


def prod_config(*templates: dict) -> dict[str, str]:
    from components.config.stack_file import load_stack_config

    return {**load_stack_config("prod"), USER_KEY: json.dumps(list(templates))}


def test_one_request_that_accepts_either_nic_class_is_one_nic():
    either = {
        "name": "any-nic",
        "requests": [
            {
                "name": "nic",
                "firstAvailable": [{"name": "ib", "deviceClassName": IB}, {"name": "rdma", "deviceClassName": RDMA}],
            }
        ],
    }
    run = run_program("prod", config=prod_config(either))
    assert run.error is None, run.error


def test_two_requests_that_each_get_a_nic_of_each_class_are_refused():
    two = {
        "name": "two-nics",
        "requests": [
            {"name": "a", "firstAvailable": [{"name": "ib", "deviceClassName": IB}]},
            {"name": "b", "exactly": {"deviceClassName": RDMA}},
        ],
    }
    run = run_program("prod", config=prod_config(two))
    assert isinstance(run.error, ConfigError)
    assert "requests both rdma.networking.nebius.ai and ib.networking.nebius.ai" in str(run.error)


TAINT_TOLERANT = {
    "name": "survives-xid",
    "requests": [
        {
            "name": "gpu",
            "exactly": {
                "deviceClassName": GPU,
                "tolerations": [
                    {"key": "gpu.nvidia.com/xid", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
                ],
            },
        }
    ],
}
SHARED_GPU = {
    "name": "two-shares",
    "requests": [
        {"name": "a", "exactly": {"deviceClassName": GPU, "capacity": {"requests": {"memory": "40Gi"}}}},
        {"name": "b", "exactly": {"deviceClassName": GPU, "capacity": {"requests": {"memory": "40Gi"}}}},
    ],
    "constraints": [{"requests": ["a", "b"], "distinctAttribute": "gpu.nvidia.com/uuid"}],
}


def template_named(run, name: str):
    [template] = [r for r in run.resources if r.type.endswith("ResourceClaimTemplate") and r.name.endswith(name)]
    return template


@pytest.mark.parametrize("minor", ["1.34", "1.35"])
def test_device_tolerations_are_refused_below_1_36_naming_the_gate_and_where_it_turns_on(minor):
    run = plan(dev_config(TAINT_TOLERANT, **{"nebius-dra:kubernetesVersion": minor}))
    assert isinstance(run.error, ConfigError), run.error
    message = str(run.error)
    assert "request gpu: exactly.tolerations needs the Kubernetes feature gate DRADeviceTaints" in message
    assert f"Alpha and off by default in {minor}" in message
    assert 'on by default from 1.36: set kubernetesVersion to "1.36"' in message


def test_a_1_36_stack_accepts_device_tolerations_and_renders_them_valid_for_1_36():
    run = plan(dev_config(TAINT_TOLERANT, **{"nebius-dra:kubernetesVersion": "1.36"}))
    assert run.error is None, run.error
    template = template_named(run, "survives-xid")
    exactly = template.inputs["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert exactly["tolerations"] == TAINT_TOLERANT["requests"][0]["exactly"]["tolerations"]
    manifest = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "x"}}
    kubernetes_validate.validate({**manifest, **template.inputs}, "1.36.0", strict=True)


def test_a_1_36_stack_accepts_consumable_capacity_and_distinct_attributes():
    run = plan(dev_config(SHARED_GPU, **{"nebius-dra:kubernetesVersion": "1.36-nebius-node.1"}))
    assert run.error is None, run.error
    devices = template_named(run, "two-shares").inputs["spec"]["spec"]["devices"]
    assert devices["requests"][0]["exactly"]["capacity"] == {"requests": {"memory": "40Gi"}}
    assert devices["constraints"] == [{"distinctAttribute": "gpu.nvidia.com/uuid", "requests": ["a", "b"]}]


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        ({"key": "k", "operator": "Exists", "value": "v"}, 'operator Exists takes no value; got value "v"'),
        ({"operator": "Equal", "value": "v"}, "has no key, which matches every taint key only with operator Exists"),
        (
            {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 5},
            "tolerationSeconds applies only to effect NoExecute",
        ),
        ({"key": "k", "effect": "PreferNoSchedule"}, "allowed: NoSchedule or NoExecute"),
    ],
)
def test_a_1_36_stack_validates_each_toleration(toleration, expected):
    template = {
        "name": "probe",
        "requests": [{"name": "gpu", "exactly": {"deviceClassName": GPU, "tolerations": [toleration]}}],
    }
    run = plan(dev_config(template, **{"nebius-dra:kubernetesVersion": "1.36"}))
    assert isinstance(run.error, ConfigError), run.error
    assert "nebius-dra:userClaimTemplates entry probe" in str(run.error)
    assert expected in str(run.error)


def test_a_constraint_needs_exactly_one_of_match_and_distinct_attribute():
    template = {
        **SHARED_GPU,
        "constraints": [{"matchAttribute": "gpu.nvidia.com/uuid", "distinctAttribute": "gpu.nvidia.com/uuid"}],
    }
    run = plan(dev_config(template, **{"nebius-dra:kubernetesVersion": "1.36"}))
    assert isinstance(run.error, ConfigError), run.error
    assert "constraints[0] sets both matchAttribute and distinctAttribute; a constraint takes exactly one" in str(
        run.error
    )
