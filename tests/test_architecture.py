"""The layout's promises: imports point down, type hints resolve, and the policy pack's copies match the program.

The pack runs from inside `policies/` and cannot import the program, so it keeps its own copies
of chart names, DeviceClasses, the version rule and the image-pinning rule; these tests tie
each copy to the program's value, so a change on one side fails here instead of in a preview.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import typing
from pathlib import Path

import pytest

import components
import tools
from components.config import claims as claims_config
from components.config import stack as stack_config
from components.cost import COST_ESTIMATE_TYPE
from components.dra_constants import (
    DCGM_EXPORTER_CHART,
    DCGM_EXPORTER_VERSION,
    GPU_OPERATOR_CHART,
    IB_CLASS,
    LEGACY_CHART,
    RDMA_CLASS,
    RENAMED_CHART,
    RESOURCE_API_VERSION,
)
from components.values.claims import template_spec_args
from components.values.cost import HOURS_PER_30_DAYS
from components.values.sample_pods import pod_spec_args, sample_pod_spec
from components.values.strict import UnknownFieldError
from policies import dra_rules

ROOT = Path(__file__).resolve().parents[1]
# Lower layers first; a module may import its own layer or a lower one, never a higher one.
LAYERS = (
    ("components.dra_constants", "components.dra_minors"),
    ("components.model", "components.merge", "components.queue_model"),
    ("components.labels",),
    ("components.config",),
    ("components.values",),
    ("components",),
)


def project_modules() -> list[str]:
    names = ["__main__"]
    for package in (components, tools):
        names.append(package.__name__)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, f"{package.__name__}.")]
    return [*names, "policies", "policies.dra_rules"]


def module_file(name: str) -> Path:
    path = ROOT / Path(*name.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def project_imports(name: str) -> set[str]:
    """Every project module `name` imports, guarded by TYPE_CHECKING or not, at any depth in the file."""
    tree = ast.parse(module_file(name).read_text())
    known = set(project_modules())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                child = f"{node.module}.{alias.name}"
                found.add(child if child in known else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {module for module in found if module in known and module != name}


def layer_of(name: str) -> int:
    for rank, prefixes in enumerate(LAYERS):
        if any(name == prefix or name.startswith(f"{prefix}.") for prefix in prefixes):
            return rank
    return len(LAYERS)


def test_no_import_circle_among_project_modules():
    graph = {name: project_imports(name) for name in project_modules()}
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                pytest.fail("import circle: " + " -> ".join([*path[path.index(target) :], target]))
            if target not in state:
                visit(target, [*path, target])
        state[name] = "done"

    for name in graph:
        if name not in state:
            visit(name, [name])


@pytest.mark.parametrize("name", [m for m in project_modules() if m.startswith("components")])
def test_component_modules_import_only_their_layer_or_lower(name):
    upward = sorted(target for target in project_imports(name) if layer_of(target) > layer_of(name))
    assert not upward, f"{name} (layer {layer_of(name)}) imports higher layers: {upward}"
    assert not {t for t in project_imports(name) if t.startswith(("tools", "policies"))}


def test_the_program_layers_never_import_the_tools_or_the_mock_engine():
    for name in project_modules():
        if name.startswith(("components", "policies")) or name == "__main__":
            assert not any(t.startswith("tools") for t in project_imports(name)), name
    assert not any("mock_engine" in t for t in project_imports("tools.verify.expectations"))


def public_functions():
    for name in project_modules():
        if name in ("__main__", "policies") or name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        for attribute, value in vars(module).items():
            if not attribute.startswith("_") and inspect.isfunction(value) and value.__module__ == name:
                yield f"{name}.{attribute}", value
            if not attribute.startswith("_") and inspect.isclass(value) and value.__module__ == name:
                for method_name, method in vars(value).items():
                    if inspect.isfunction(method) and not method_name.startswith("_"):
                        yield f"{name}.{attribute}.{method_name}", method


def test_type_hints_resolve_on_every_public_function():
    failures = {}
    for qualified, function in public_functions():
        try:
            typing.get_type_hints(function)
        except Exception as error:
            failures[qualified] = repr(error)
    assert not failures


def test_the_typed_claim_translation_refuses_a_field_it_does_not_know():
    spec = {
        "spec": {
            "devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}]}
        }
    }
    template_spec_args(spec)
    spec["spec"]["devices"]["requests"][0]["exactly"]["adminAcess"] = True
    with pytest.raises(UnknownFieldError, match="adminAcess"):
        template_spec_args(spec)


def test_the_typed_pod_translation_refuses_a_field_it_does_not_know():
    spec = sample_pod_spec("gpu", "gpu", "nvidia/cuda:13.1.1-runtime-ubuntu24.04", ["true"])
    pod_spec_args(spec)
    with pytest.raises(UnknownFieldError, match="activeDeadlineSeconds"):
        pod_spec_args({**spec, "activeDeadlineSeconds": 600})


def test_policy_copies_of_chart_names_and_device_classes_match_the_program():
    assert dra_rules.DRA_DRIVER_CHARTS == (LEGACY_CHART, RENAMED_CHART)
    assert dra_rules.GPU_OPERATOR_CHART == GPU_OPERATOR_CHART
    assert dra_rules.DCGM_EXPORTER_CHART == DCGM_EXPORTER_CHART
    assert ".".join(map(str, dra_rules.MINIMUM_DCGM_EXPORTER_VERSION)) == DCGM_EXPORTER_VERSION
    assert f"resource.k8s.io/{dra_rules.DRA_API_VERSION}" == RESOURCE_API_VERSION
    assert (dra_rules.RDMA_DEVICE_CLASS, dra_rules.IB_DEVICE_CLASS) == (RDMA_CLASS, IB_CLASS)


def test_policy_copy_of_the_cost_estimate_type_is_the_programs():
    assert dra_rules.COST_ESTIMATE_TYPE == COST_ESTIMATE_TYPE
    assert dra_rules.HOURS_PER_30_DAYS == HOURS_PER_30_DAYS


def test_policy_minimum_version_is_the_programs():
    assert ".".join(map(str, stack_config.MIN_KUBERNETES)) == dra_rules.DEFAULT_MINIMUM_VERSION


VERSIONS = [
    "1.34",
    "1.35",
    "1.34-nebius-node.2",
    "1.34.1",
    "1.3",
    "v1.34",
    "1.34-nebius-node.",
    "1.34\n",
    " 1.34",
    "134",
    "",
]


@pytest.mark.parametrize("version", VERSIONS)
def test_policy_version_rule_accepts_what_the_program_accepts(version):
    assert bool(dra_rules._CLUSTER_VERSION.match(version)) == bool(stack_config.VERSION_PATTERN.match(version))


IMAGES = [
    "nvidia/cuda:13.1.1-runtime-ubuntu24.04",
    "nvidia/cuda",
    "nvidia/cuda:latest",
    "nvidia/cuda:",
    "registry:5000/cuda",
    "registry:5000/cuda:1.0",
    "nvidia/cuda@sha256:" + "a" * 64,
    "nvidia/cuda:1.0@sha256:" + "b" * 64,
    "nvidia/cuda:-bad",
]


@pytest.mark.parametrize("image", IMAGES)
def test_policy_image_pinning_agrees_with_the_program(image):
    assert dra_rules.image_is_pinned(image) == (claims_config.image_problem(image) is None)


def test_policy_copy_of_the_existing_group_type_matches_the_component():
    from components.existing_gpu_node_group import ExistingGpuNodeGroup, ExistingGpuNodeGroupArgs

    source = inspect.getsource(ExistingGpuNodeGroup.__init__)
    assert f'"{dra_rules.EXISTING_GPU_GROUP_TYPE}"' in source
    assert ExistingGpuNodeGroupArgs.__dataclass_fields__
