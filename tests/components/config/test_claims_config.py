"""Claim and sample config: what parses, and every mistake refused by name before anything is registered."""

from __future__ import annotations

import dataclasses
import json

import pytest

from components.config.claim_templates import image_problem
from components.config.errors import ConfigError
from components.config.stack import parse_stack_config
from components.config.stack_file import load_stack_config
from components.model import ConstraintConfig, DeviceRequestConfig, DeviceSelection, UserClaimTemplate
from tools.plan.mock_engine import run_program

USER_KEY = "nebius-dra:userClaimTemplates"
GPU_SELECTOR = 'device.attributes["gpu.nvidia.com"].productName == "NVIDIA H200"'
PRODUCT = 'device.attributes["gpu.nvidia.com"].productName'
H9000 = f'{PRODUCT} == "NVIDIA H9000"'


def parsed(stack: str, **changes: str):
    raw = {**load_stack_config(stack), **{f"nebius-dra:{key}": value for key, value in changes.items()}}
    return parse_stack_config({key.split(":", 1)[1]: value for key, value in raw.items()}, stack).claims


def refused(stack: str, changes: dict[str, str]) -> str:
    run = run_program(stack, config={**load_stack_config(stack), **changes})
    assert isinstance(run.error, ConfigError), run.error
    assert run.resources == [], [r.name for r in run.resources]
    return str(run.error)


def user(*templates: dict) -> dict[str, str]:
    return {USER_KEY: json.dumps(list(templates))}


def request(name: str = "gpu", device_class: str = "gpu.nvidia.com", **exactly) -> dict:
    return {"name": name, "exactly": {"deviceClassName": device_class, **exactly}}


def test_prod_user_template_parses_into_frozen_objects():
    claims = parsed("prod")
    (template,) = claims.user_templates
    assert template == UserClaimTemplate(
        name="h200-full-node",
        requests=(
            DeviceRequestConfig("gpus", DeviceSelection("gpu.nvidia.com", None, "All", (GPU_SELECTOR,))),
            DeviceRequestConfig("nics", DeviceSelection("ib.networking.nebius.ai", None, "All")),
        ),
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        template.name = "other"  # type: ignore[misc]


def test_defaults_follow_the_stack():
    dev, prod = parsed("dev"), parsed("prod")
    assert (dev.sample_pods, prod.sample_pods) == (True, False)
    assert (dev.infiniband, prod.infiniband) == (False, True)
    assert (dev.multi_gpu_count, prod.multi_gpu_count) == (1, 8)
    assert dev.namespace == prod.namespace == "dra-samples"


def test_constraints_and_opaque_config_are_kept():
    template = {
        "name": "paired",
        "requests": [request("gpu"), request("nic", "ib.networking.nebius.ai")],
        "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
        "config": [
            {
                "requests": ["gpu"],
                "opaque": {
                    "driver": "gpu.nvidia.com",
                    "parameters": {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"},
                },
            }
        ],
    }
    (parsed_template,) = parsed("prod", userClaimTemplates=json.dumps([template])).user_templates
    assert parsed_template.constraints == (ConstraintConfig("resource.kubernetes.io/pcieRoot", ("gpu", "nic")),)
    assert parsed_template.config[0].driver == "gpu.nvidia.com"
    assert parsed_template.config[0].requests == ("gpu",)


def test_an_allowed_extra_device_class_is_accepted_and_created(stack_config):
    config = {
        **stack_config("dev"),
        **user({"name": "fpga", "requests": [request("fpga", "fpga.example.com")]}),
        "nebius-dra:allowedDeviceClasses": json.dumps(["fpga.example.com"]),
    }
    run = run_program("dev", config=config)
    assert run.error is None, run.error
    assert "fpga" in {
        r.inputs["metadata"]["name"] for r in run.of_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    }


def test_both_network_classes_pass_when_two_devices_are_meant():
    template = {
        "name": "two-nics",
        "separateNetworkDevices": True,
        "requests": [request("ib", "ib.networking.nebius.ai"), request("rdma", "rdma.networking.nebius.ai")],
    }
    assert parsed("prod", userClaimTemplates=json.dumps([template])).user_templates[0].name == "two-nics"


@pytest.mark.parametrize(
    ("stack", "template", "expected"),
    [
        pytest.param(
            "dev",
            {"name": "odd", "requests": [request(device_class="gpu.example.com")]},
            'request gpu: exactly: deviceClassName "gpu.example.com" is not a DeviceClass this cluster provides',
            id="unknown-class",
        ),
        pytest.param(
            "prod",
            {
                "name": "nic",
                "requests": [request("ib", "ib.networking.nebius.ai"), request("rdma", "rdma.networking.nebius.ai")],
            },
            "allocates two separate NICs",
            id="rdma-and-ib",
        ),
        pytest.param(
            "dev",
            {
                "name": "by-index",
                "requests": [
                    request(selectors=[{"cel": {"expression": 'device.attributes["gpu.nvidia.com"].index == 0'}}])
                ],
            },
            "uses the GPU attribute index, which the NVIDIA DRA driver stopped publishing in 25.8.0",
            id="index-selector",
        ),
        pytest.param(
            "dev",
            {
                "name": "by-minor",
                "requests": [
                    request(selectors=[{"cel": {"expression": 'device.attributes["gpu.nvidia.com"]["minor"] < 4'}}])
                ],
            },
            "uses the GPU attribute minor",
            id="minor-selector",
        ),
        pytest.param(
            "dev",
            {
                "name": "pair",
                "requests": [request("a"), request("b")],
                "constraints": [{"matchAttribute": "gpu.nvidia.com/minor"}],
            },
            "constraints[0].matchAttribute gpu.nvidia.com/minor was removed",
            id="minor-constraint",
        ),
        pytest.param(
            "dev",
            {
                "name": "broken",
                "requests": [
                    request(selectors=[{"cel": {"expression": 'device.attributes["gpu.nvidia.com"].productName =='}}])
                ],
            },
            "request gpu: exactly: selectors[0] is not valid CEL",
            id="cel-syntax",
        ),
        pytest.param(
            "dev",
            {"name": "old", "requests": [{"name": "gpu", "deviceClassName": "gpu.nvidia.com", "count": 2}]},
            "requests[0] has count, deviceClassName directly on the request: that is the v1beta1 shape. resource.k8s.io/v1 "
            'puts them under exactly: write {name: "gpu", exactly: {deviceClassName: "gpu.nvidia.com", count: 2}}',
            id="v1beta1-shape",
        ),
        pytest.param(
            "dev",
            {"name": "nic", "requests": [request("ib", "ib.networking.nebius.ai")]},
            "needs DRANet's NICs, which only InfiniBand GPU groups have",
            id="network-without-infiniband",
        ),
        pytest.param(
            "dev",
            {"name": "all", "requests": [request(allocationMode="All", count=2)]},
            "count is set with allocationMode All",
            id="count-with-all",
        ),
        pytest.param(
            "dev",
            {"name": "zero", "requests": [request(count=0)]},
            "count got 0; expected a whole number from 1 to 32",
            id="zero-count",
        ),
        pytest.param(
            "dev",
            {
                "name": "pair",
                "requests": [request("gpu")],
                "constraints": [{"requests": ["gpu", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
            },
            "constraints[0].requests names nic, which this template does not request",
            id="constraint-unknown-request",
        ),
        pytest.param(
            "prod",
            {
                "name": "numa",
                "requests": [request("gpu"), request("nic", "ib.networking.nebius.ai")],
                "constraints": [{"matchAttribute": "dra.net/numaNode"}],
            },
            "constraints[0].matchAttribute dra.net/numaNode is published only by the dra.net driver, but request gpu gets its device from gpu.nvidia.com",
            id="constraint-on-another-drivers-attribute",
        ),
        pytest.param(
            "dev",
            {
                "name": "shared",
                "requests": [request()],
                "config": [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {"sharing": {}}}}],
            },
            "config[0].opaque.parameters got",
            id="opaque-without-kind",
        ),
        pytest.param(
            "dev",
            {"name": "gpu", "requests": [request()]},
            "name gpu is already used by a built-in template",
            id="builtin-name",
        ),
        pytest.param("dev", {"name": "Bad_Name", "requests": [request()]}, 'name got "Bad_Name"', id="bad-name"),
        pytest.param("dev", {"name": "empty", "requests": []}, "requests got []", id="no-requests"),
        pytest.param(
            "dev",
            {"name": "typo", "requests": [request(selector=[])]},
            'exactly has unknown field(s) "selector"; did you mean selectors?; allowed: deviceClassName, selectors',
            id="unknown-field",
        ),
        pytest.param(  # hostile review: a product no Nebius platform has was taken, and the claim never allocated
            "prod",
            {"name": "h9000", "requests": [request(selectors=[{"cel": {"expression": H9000}}])]},
            'request gpu: exactly: selectors[0] selects productName "NVIDIA H9000", which no GPU group of the stack serves (its '
            'platforms\' products: "NVIDIA H200"; every known platform\'s: "NVIDIA H200" (gpu-h200-sxm), "NVIDIA H100 '
            '80GB HBM3" (gpu-h100-sxm)), so the claim is never allocated',
            id="impossible-product",
        ),
        pytest.param(
            "prod",
            {
                "name": "h100",
                "requests": [request(selectors=[{"cel": {"expression": f"{PRODUCT} in ['NVIDIA H100 80GB HBM3']"}}])],
            },
            'selects productName "NVIDIA H100 80GB HBM3", which no GPU group of the stack serves',
            id="other-platforms-product",
        ),
    ],
)
def test_invalid_user_template_is_refused_by_name(stack, template, expected):
    message = refused(stack, user(template))
    assert f"nebius-dra:userClaimTemplates entry {template['name']}: " in message
    assert expected in message


@pytest.mark.parametrize(
    "expression",
    [GPU_SELECTOR, f'{H9000} || device.driver == "gpu.nvidia.com"', f"!({H9000})", 'device.driver == "gpu.nvidia.com"'],
)
def test_a_selector_that_may_match_a_product_of_the_stack_is_taken(expression):
    template = {"name": "maybe", "requests": [request(selectors=[{"cel": {"expression": expression}}])]}
    assert parsed("prod", userClaimTemplates=json.dumps([template])).user_templates[-1].name == "maybe"


def test_every_template_problem_is_reported_in_one_run():
    message = refused(
        "prod",
        user(
            {
                "name": "first",
                "requests": [request("ib", "ib.networking.nebius.ai"), request("rdma", "rdma.networking.nebius.ai")],
            },
            {"name": "second", "requests": [request(allocationMode="All", count=2)]},
        ),
    )
    assert "entry first: requests both" in message
    assert "entry second: request gpu: exactly: count is set with allocationMode All" in message
    assert "(2 problems)" in message


@pytest.mark.parametrize(
    ("stack", "changes", "expected"),
    [
        (
            "dev",
            {"nebius-dra:builtinClaimTemplates": json.dumps(["gpu", "gpus"])},
            'nebius-dra:builtinClaimTemplates: [1] got "gpus"; did you mean gpu?; allowed: gpu, multi-gpu',
        ),
        (
            "prod",
            {"nebius-dra:multiGpuCount": "16"},
            "nebius-dra:multiGpuCount: got 16: the multi-gpu template asks one node for 16 GPU(s), but the largest GPU node has 8 GPU(s)",
        ),
        (
            "prod",
            {"nebius-dra:multiGpuCount": "1"},
            "nebius-dra:multiGpuCount: got 1; the multi-GPU template needs 2 or more",
        ),
        (
            "dev",
            {"nebius-dra:sampleGpuImage": "nvidia/cuda:latest"},
            'nebius-dra:sampleGpuImage: "nvidia/cuda:latest" uses the tag latest',
        ),
        (
            "dev",
            {"nebius-dra:sampleGpuImage": "nvidia/cuda:Latest"},
            'nebius-dra:sampleGpuImage: "nvidia/cuda:Latest" uses the tag Latest, which moves',
        ),
        # Issue 37: only `latest` was refused; every tag that names no release moves as it does.
        (
            "dev",
            {"nebius-dra:sampleGpuImage": "nvidia/cuda:main"},
            'nebius-dra:sampleGpuImage: "nvidia/cuda:main" uses the tag main, which moves (a build of a git '
            "branch's newest commit, pushed again with each commit); pin a release tag or a digest",
        ),
        (
            "dev",
            {"nebius-dra:sampleRdmaImage": "registry.example.com/rdma-tools:Nightly"},
            'nebius-dra:sampleRdmaImage: "registry.example.com/rdma-tools:Nightly" uses the tag Nightly, which moves '
            "(rebuilt every night",
        ),
        (
            "dev",
            {"nebius-dra:sampleGpuImage": "nvidia/cuda:stable"},
            'nebius-dra:sampleGpuImage: "nvidia/cuda:stable" uses the tag stable, which moves (the newest release',
        ),
        (
            "dev",
            {"nebius-dra:sampleRdmaImage": "registry:5000/rdma-tools"},
            'nebius-dra:sampleRdmaImage: got "registry:5000/rdma-tools": it has no tag',
        ),
        (
            "dev",
            {"nebius-dra:builtinClaimTemplates": json.dumps(["gpu-by-product"])},
            "nebius-dra:samplePods: is true, but the samples claim the built-in template gpu",
        ),
        (
            "prod",
            {"nebius-dra:samplePods": "true", "nebius-dra:builtinClaimTemplates": json.dumps(["gpu"])},
            "claim the built-in template ib-network",
        ),
        (
            "dev",
            {"nebius-dra:claimNamespace": "DRA_Samples"},
            'nebius-dra:claimNamespace: got "DRA_Samples"; expected a DNS label',
        ),
        ("dev", {"nebius-dra:gpuProducts": json.dumps(["NVIDIA H200", ""])}, 'nebius-dra:gpuProducts: [1] got ""'),
        ("dev", {USER_KEY: json.dumps({"name": "x"})}, "nebius-dra:userClaimTemplates: got"),
    ],
)
def test_invalid_claim_keys_are_refused(stack, changes, expected):
    assert expected in refused(stack, changes)


# Image references the OCI grammar (github.com/distribution/reference) refuses, each with the part the refusal names.
HOSTILE_IMAGES = [
    ("nvidia/CUDA:13.1.1", 'its path component 2 "CUDA" has an uppercase letter'),
    ("Nvidia/cuda:13.1.1", 'its path component 1 "Nvidia" has an uppercase letter'),
    ("a//b:1", "its path component 2 is empty"),
    ("a..b:1", 'its path component 1 "a..b" is malformed'),
    ("nvidia/cuda-:1", 'its path component 2 "cuda-" is malformed'),
    ("registry.example.com:99999/x:1", "its registry's port is 99999: 1 to 65535"),
    ("registry.example.com:0/x:1", "its registry's port is 0: 1 to 65535"),
    ("-registry.example.com/x:1", "its registry (before the first '/') \"-registry.example.com\" is not host[:port]"),
    ("nvidia/cuda:.1", "its tag (after the last ':') is not 1 to 128"),
    ("nvidia/cuda:" + "1" * 129, "is not 1 to 128"),
    ("nvidia/cuda@sha256:abc", "its digest (after '@') is not algorithm:hex"),
    ("x" * (1 << 20), "it has 1048576 characters, over the limit of 255"),
    ("nvidia/cuda:13\x00", "character 15 is U+0000"),
    ("nvidia/cuda:13\x1b[2J", "character 15 is U+001B"),
    ("nvidia/cuda:13 1", "character 15 is U+0020 SPACE"),
    ("nvidia/cüda:13", "character 9 is U+00FC"),
    ("nvidia/cuda:13\n", "character 15 is U+000A"),
    ("nvidia/cuda", "it has no tag; pin one"),
]


@pytest.mark.parametrize("key", ["sampleGpuImage", "sampleRdmaImage"])
@pytest.mark.parametrize(("image", "expected"), HOSTILE_IMAGES, ids=[image[:40] for image, _ in HOSTILE_IMAGES])
def test_an_image_off_the_reference_grammar_is_refused_by_part(key, image, expected):
    message = refused("prod", {"nebius-dra:samplePods": "true", f"nebius-dra:{key}": image})
    (line,) = [line for line in message.splitlines() if f"nebius-dra:{key}:" in line]
    assert expected in line
    assert (
        "allowed: an image reference [registry/]path pinned by a tag (:tag), a digest (@algorithm:hex) or both" in line
    )
    assert len(line) < 1200 and "\x00" not in line and "\x1b" not in line


@pytest.mark.parametrize("image", ["nvidia/cuda:stable-13.1.1", "nvidia/cuda:main-2024.06.01", "nvidia/cuda:v1-dev1"])
def test_a_tag_that_only_starts_with_the_name_of_one_that_moves_pins(image):
    """Issue 37: a tag is refused only when it is one of FLOATING_TAGS whole; a release's tag may start with one."""
    assert image_problem(image) is None


def test_an_image_with_a_user_and_password_is_refused_without_quoting_them():
    message = refused("dev", {"nebius-dra:sampleGpuImage": "robot:hunter2@registry.example.com/x:1"})
    assert 'nebius-dra:sampleGpuImage: got "<38 characters: ' in message
    assert "hidden: may be a credential" in message and "its digest (after '@') is not algorithm:hex" in message
    assert "hunter2" not in message and "robot" not in message


def test_images_in_the_reference_grammar_pass():
    for image in (
        "nvidia/cuda:13.1.1-runtime-ubuntu24.04",
        "nvcr.io/nvidia/pytorch:25.01-py3",
        "localhost/rdma_tools__v2:1",
        "localhost:5000/rdma--tools:1",
        "[::1]:5000/rdma.tools:1",
        "Registry.Example.com/team/rdma:v1.2_3",
        "nvcr.io/nvidia/pytorch:25.01-py3@sha256:" + "a" * 64,
        "registry/rdma-tools:1",
    ):
        assert parsed("dev", sampleGpuImage=image).sample_gpu_image == image


def test_pinned_images_pass():
    digest = "nvidia/cuda@sha256:" + "0" * 64
    assert parsed("dev", sampleGpuImage=digest).sample_gpu_image == digest
    assert (
        parsed("prod", samplePods="true", sampleRdmaImage="registry:5000/rdma-tools:1.2").sample_rdma_image
        == "registry:5000/rdma-tools:1.2"
    )


def test_a_driver_attribute_constraint_over_that_drivers_requests_is_accepted():
    template = {
        "name": "nic-pair",
        "requests": [request("gpu"), request("nics", "ib.networking.nebius.ai", count=2)],
        "constraints": [{"requests": ["nics"], "matchAttribute": "dra.net/numaNode"}],
    }
    (parsed_template,) = parsed("prod", userClaimTemplates=json.dumps([template])).user_templates
    assert parsed_template.constraints == (ConstraintConfig("dra.net/numaNode", ("nics",)),)


@pytest.mark.parametrize(
    "requests",
    [
        [request(count=16)],
        [{"name": "gpu", "firstAvailable": [{"name": "many", "deviceClassName": "gpu.nvidia.com", "count": 32}]}],
        [request("a", count=6), request("b", count=6)],
    ],
    ids=["exactly-16", "firstAvailable-32", "two-requests-of-6"],
)
def test_a_user_template_larger_than_every_node_is_refused_naming_the_largest(requests):
    message = refused("prod", user({"name": "too-big", "requests": requests}))
    assert f"{USER_KEY} entry too-big: asks one node for" in message
    assert "the largest GPU node has 8 GPU(s) and 8 NIC(s) (group h200-train, preset 8gpu-128vcpu-1600gb)" in message
    assert "a claim's devices all come from one node" in message


def test_a_template_fits_when_one_alternative_or_one_group_does():
    # 8 GPUs and a NIC: only h200-train (InfiniBand) holds both; firstAvailable may fall back to 8 GPUs.
    fallback = {
        "name": "gpu",
        "firstAvailable": [
            {"name": "big", "deviceClassName": "gpu.nvidia.com", "count": 16},
            {"name": "node", "deviceClassName": "gpu.nvidia.com", "count": 8},
        ],
    }
    nic = request("nic", "ib.networking.nebius.ai")
    templates = parsed(
        "prod", userClaimTemplates=json.dumps([{"name": "node", "requests": [fallback, nic]}])
    ).user_templates
    assert [template.name for template in templates] == ["node"]


def test_one_pcie_root_constraint_over_two_gpus_and_a_nic_is_left_to_the_pack():
    """How devices sit on PCIe roots is not captured for 8-GPU nodes: the advisory pcie-root-constraint-per-pair says it."""
    template = {
        "name": "two-pairs",
        "requests": [request("gpus", count=2), request("nic", "ib.networking.nebius.ai")],
        "constraints": [{"requests": ["gpus", "nic"], "matchAttribute": "resource.kubernetes.io/pcieRoot"}],
    }
    [parsed_template] = parsed("prod", userClaimTemplates=json.dumps([template])).user_templates
    assert parsed_template.constraints[0].requests == ("gpus", "nic")


def test_one_pcie_root_constraint_per_pair_is_accepted():
    pairs = [
        request("gpu0"),
        request("nic0", "ib.networking.nebius.ai"),
        request("gpu1"),
        request("nic1", "ib.networking.nebius.ai"),
    ]
    constraints = [
        {"requests": ["gpu0", "nic0"], "matchAttribute": "resource.kubernetes.io/pcieRoot"},
        {"requests": ["gpu1", "nic1"], "matchAttribute": "resource.kubernetes.io/pcieRoot"},
    ]
    templates = parsed(
        "prod", userClaimTemplates=json.dumps([{"name": "pairs", "requests": pairs, "constraints": constraints}])
    ).user_templates
    assert len(templates[0].constraints) == 2


def _h100_dev() -> str:
    groups = json.loads(load_stack_config("dev")["nebius-dra:gpuNodeGroups"])
    return json.dumps([{**group, "platform": "gpu-h100-sxm"} for group in groups])


def test_the_product_template_selects_the_stacks_own_products():
    """Issue 39's fifth edit: an H100-only stack must not select NVIDIA H200 (GPU_PRODUCTS has each name's source)."""
    assert parsed("dev").gpu_products == ("NVIDIA H200",)
    assert parsed("dev", gpuNodeGroups=_h100_dev()).gpu_products == ("NVIDIA H100 80GB HBM3",)
    expected = 'nebius-dra:gpuProducts: lists "NVIDIA H200", which no GPU group of the stack serves'
    assert expected in refused(
        "dev", {"nebius-dra:gpuNodeGroups": _h100_dev(), "nebius-dra:gpuProducts": '["NVIDIA H200"]'}
    )


def test_a_product_template_without_a_known_product_is_not_created_and_the_plan_says_why():
    from tools.plan.model import build_plan
    from tools.plan.report import render_markdown, render_text

    groups = json.loads(load_stack_config("dev")["nebius-dra:gpuNodeGroups"])
    unknown = json.dumps([{**g, "platform": "gpu-b200-sxm", "preset": "1gpu-20vcpu-224gb"} for g in groups])
    claims = parsed("dev", gpuNodeGroups=unknown)
    assert "gpu-by-product" not in claims.active_builtin_templates
    assert "known product name" in claims.left_out_builtin_templates["gpu-by-product"]
    plan = build_plan("dev", config={**load_stack_config("dev"), "nebius-dra:gpuNodeGroups": unknown}, out=None)
    assert plan.error is None, plan.error
    assert not [r for r in plan.run.resources if r.name.endswith("gpu-by-product")]
    for shown in (render_text(plan), render_markdown(plan)):
        assert "gpu-by-product: no GPU group's platform has a known product name" in shown


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("builtinClaimTemplates", ["gpu", "gpu"], '"gpu"'),
        ("builtinClaimTemplates", ["gpu", "multi-gpu", "multi-gpu", "gpu"], '"gpu", "multi-gpu"'),
        ("allowedDeviceClasses", ["x.example.com", "x.example.com"], '"x.example.com"'),
        ("gpuProducts", ["NVIDIA H200", "NVIDIA H200"], '"NVIDIA H200"'),
        ("draPluginOutageAccepted", ["h200", "h200"], '"h200"'),
    ],
)
def test_a_name_listed_twice_is_refused_not_merged(key, value, named):
    # `[gpu, gpu]` was taken as `[gpu]` (attack 37, F8): a slip for another name is said, not swallowed.
    message = refused("dev", {f"nebius-dra:{key}": json.dumps(value)})
    assert f"nebius-dra:{key}: lists {named} more than once; list each once" in message


def test_a_device_class_the_stack_knows_is_refused_in_allowed_device_classes():
    """The setting lists extra classes, besides the five: one of the five there is a slip for another name."""
    message = refused("dev", {"nebius-dra:allowedDeviceClasses": json.dumps(["gpu.nvidia.com", "x.example.com"])})
    assert 'nebius-dra:allowedDeviceClasses: lists "gpu.nvidia.com", which the stack knows already' in message


@pytest.mark.parametrize(
    "expression",
    [
        'device.driver == "x" "ghp_CANARYabcdefghijklmnopqrstuvwxyz0123"',
        "device.driver == 'x' ghp_CANARYabcdefghijklmnopqrstuvwxyz0123",
    ],
)
def test_a_cel_refusal_hides_a_token_shaped_word_of_the_expression_it_quotes(expression):
    """Attack 2, A5: the parser's `extraneous input '...'` quoted a GitHub token of the expression whole."""
    template = {"name": "tok", "requests": [request(selectors=[{"cel": {"expression": expression}}])]}
    message = refused("prod", user(template))
    assert "selectors[0] is not valid CEL: Syntax error: extraneous input" in message
    assert "CANARY" not in message and "[redacted]" in message
