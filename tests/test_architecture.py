"""The layout's promises: imports point down, type hints resolve, and the policy pack's copies match the program.

The pack runs from inside `policies/` and cannot import the program, so it keeps its own copies
of chart names, DeviceClasses, the version rule and the image-pinning rule; these tests tie
each copy to the program's value, so a change on one side fails here instead of in a preview.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import re
import typing
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from components import dra_constants
from components.config import claim_templates as claims_config
from components.config import stack as stack_config
from components.config.errors import config_key
from components.config.prices import OVERRIDES_KEY
from components.config.repositories import release_repositories
from components.cost import COST_ESTIMATE_TYPE
from components.dra_constants import (
    DCGM_EXPORTER_CHART,
    DCGM_EXPORTER_VERSION,
    GPU_CLASS,
    GPU_OPERATOR_CHART,
    IB_CLASS,
    LEGACY_CHART,
    PCIE_ROOT_ATTRIBUTE,
    RDMA_CLASS,
    RENAMED_CHART,
    RESOURCE_API_VERSION,
    VFIO_CLASS,
)
from components.model import Autoscaling, NodeRange
from components.queue_model import KUEUE_CHART, KUEUE_IMAGE, KUEUE_REPOSITORY
from components.values.claim_templates import template_spec_args
from components.values.cost import HOURS_PER_30_DAYS
from components.values.sample_pods import pod_spec_args, sample_pod_spec
from components.values.strict import UnknownFieldError
from policies.dra_guardrails import claim_rules, cluster_rules, cost_rules, planned, release_rules
from policies.dra_guardrails.planned import field_at
from tests.helpers import STACKS, suite_modules
from tests.stack_configs import parsed
from tools.import_graph import ROOT, layer_of, module_file, project_imports, project_modules, python_files


def test_every_folder_of_python_files_is_a_package():
    """Without `__init__.py` a folder's modules are invisible to import-based tooling (pkgutil, mypy's packages)."""
    folders = {path.parent for path in python_files()}
    assert not sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").is_file())


def test_the_guards_see_every_module_on_disk():
    names = set(project_modules())
    assert {"components.values.node_groups", "components.cel.walker", "tools.plan.files"} <= names
    assert len(names) == len(python_files()) + 1


def test_no_import_circle_among_project_modules():
    known = project_modules()
    graph = {name: project_imports(name, known) for name in known}
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


def test_the_policy_pack_imports_nothing_of_the_program():
    """The CLI runs the pack from inside `policies/`, where `components` and `tools` cannot be imported."""
    for name in project_modules():
        if name.startswith("policies"):
            assert not {t for t in project_imports(name) if t.startswith(("components", "tools"))}, name
            assert not re.search(r"^\s*(from|import) policies\b", module_file(name).read_text(), re.M), name


def test_relative_imports_are_seen_by_the_guards():
    assert "policies.dra_guardrails.framework" in project_imports("policies.dra_guardrails.registry")
    assert "policies.dra_guardrails.registry" in project_imports("policies.dra_guardrails")


def test_the_program_layers_never_import_the_tools_or_the_mock_engine():
    for name in project_modules():
        if name.startswith(("components", "policies")) or name == "__main__":
            assert not any(t.startswith("tools") for t in project_imports(name)), name
    assert not any("mock_engine" in t for t in project_imports("tools.verify.expectations"))


TEST_TREES = ("tests", "e2e")


def imported_test_modules(source: str) -> list[str]:
    """The test modules (`test_*`) a file's imports name, at any depth: `tests.test_x`, e2e's bare `test_x`."""
    named = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            named += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            named.append(node.module or "")
            in_tests = node.module is None or node.module == "tests" or node.module.startswith("tests.")
            named += [f"{node.module or ''}.{alias.name}" for alias in node.names if in_tests]
    return [name for name in named if name.rpartition(".")[2].startswith("test_")]


def test_no_test_module_imports_another_test_module():
    """What tests share lives in modules named for it (tests/helpers.py, tests/nebius_inputs.py, e2e/dra/dra_checks.py):
    importing a test module runs its tests again wherever it is imported and hides the helper in a test file."""
    files = [path for tree in TEST_TREES for path in (ROOT / tree).rglob("*.py") if "node_modules" not in path.parts]
    assert len(files) > 50
    importing = {
        str(path.relative_to(ROOT)): found for path in files if (found := imported_test_modules(path.read_text()))
    }
    assert importing == {}


@pytest.mark.parametrize(
    "source",
    [
        "from tests.test_queues import TEAMS",
        "import tests.test_queues",
        "from tests import test_queues",
        "from . import test_queues",
        "from tests.components import test_queues",
        "from test_dra_dev import test_verifier_passes",
        "def f():\n    from tests.test_cost import git",
    ],
)
def test_every_form_of_importing_a_test_module_is_seen(source):
    assert imported_test_modules(source)


def test_every_test_folder_mirrors_a_source_package():
    """tests/tools/plan/ holds the tests of tools/plan/: a module's tests are where its source is, and a folder that
    mirrors nothing (the old name of a renamed package, a folder made up for one module) fails here. Each is a
    package, so pytest names a module by its path and two modules of one name in different folders do not collide."""
    tests = ROOT / "tests"
    folders = {folder for path in suite_modules() for folder in path.relative_to(tests).parents} - {Path(".")}
    assert folders, "the suite's modules are in folders of their own"
    mirroring_nothing = sorted(f"tests/{f.as_posix()}" for f in folders if not (ROOT / f / "__init__.py").is_file())
    assert not mirroring_nothing, "test folders whose path is no package of components/, policies/ or tools/"
    not_packages = sorted(f"tests/{f.as_posix()}" for f in folders if not (tests / f / "__init__.py").is_file())
    assert not not_packages, "test folders without __init__.py"


def test_importing_a_helper_or_a_test_function_from_a_helper_is_not_taken_for_a_test_module():
    assert imported_test_modules("from tests.helpers import STACKS\nfrom dra_checks import test_like") == []


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
                if dataclasses.is_dataclass(value):
                    yield f"{name}.{attribute}", value


def test_type_hints_resolve_on_every_public_function_and_dataclass():
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
    assert planned.DRA_DRIVER_CHARTS == (LEGACY_CHART, RENAMED_CHART)
    assert planned.GPU_OPERATOR_CHART == GPU_OPERATOR_CHART
    assert planned.DCGM_EXPORTER_CHART == DCGM_EXPORTER_CHART
    assert ".".join(map(str, release_rules.MINIMUM_DCGM_EXPORTER_VERSION)) == DCGM_EXPORTER_VERSION
    assert f"resource.k8s.io/{planned.DRA_API_VERSION}" == RESOURCE_API_VERSION
    assert (planned.RDMA_DEVICE_CLASS, planned.IB_DEVICE_CLASS) == (RDMA_CLASS, IB_CLASS)
    assert planned.GPU_DEVICE_CLASSES == (GPU_CLASS, VFIO_CLASS)
    assert planned.PCIE_ROOT_ATTRIBUTE == PCIE_ROOT_ATTRIBUTE


def test_policy_copies_of_kueues_source_and_the_upstream_chart_hosts_are_the_programs():
    assert (release_rules.KUEUE_UPSTREAM, release_rules.KUEUE_IMAGE) == (KUEUE_REPOSITORY, KUEUE_IMAGE)
    upstreams = (
        KUEUE_REPOSITORY,
        dra_constants.KUBERNETES_OCI_REPOSITORY,
        dra_constants.NGC_REPOSITORY,
        dra_constants.DCGM_EXPORTER_REPOSITORY,
        dra_constants.PROMETHEUS_COMMUNITY_REPOSITORY,
    )
    assert {urlsplit(url).hostname for url in upstreams} == release_rules.UPSTREAM_CHART_HOSTS


def test_policy_map_of_charts_to_repository_settings_is_the_programs():
    """Each chart the program installs, and the setting that moves it, as the program reads the settings."""
    charts = {
        LEGACY_CHART,
        RENAMED_CHART,
        GPU_OPERATOR_CHART,
        dra_constants.NETWORK_OPERATOR_CHART,
        DCGM_EXPORTER_CHART,
        dra_constants.KUBE_PROMETHEUS_STACK_CHART,
        KUEUE_CHART,
    }
    assert set(release_rules.CHART_REPOSITORY_SETTINGS) == charts
    assert (planned.NETWORK_OPERATOR_CHART, planned.KUBE_PROMETHEUS_STACK_CHART, planned.KUEUE_CHART) == (
        dra_constants.NETWORK_OPERATOR_CHART,
        dra_constants.KUBE_PROMETHEUS_STACK_CHART,
        KUEUE_CHART,
    )
    written = {
        config_key(setting[0]) if len(setting) == 1 else f"{config_key(setting[0])}: {setting[1]}"
        for setting in release_rules.CHART_REPOSITORY_SETTINGS.values()
    }
    assert written == set(release_repositories(parsed("dev")))


def test_policy_copy_of_the_cost_estimate_type_is_the_programs():
    assert planned.COST_ESTIMATE_TYPE == COST_ESTIMATE_TYPE
    assert config_key(OVERRIDES_KEY) == planned.PRICE_OVERRIDES_ORIGIN
    assert cost_rules.HOURS_PER_30_DAYS == HOURS_PER_30_DAYS


def test_policy_minimum_version_is_the_programs():
    assert ".".join(map(str, stack_config.MIN_KUBERNETES)) == cluster_rules.DEFAULT_MINIMUM_VERSION


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
    assert bool(planned.CLUSTER_VERSION.match(version)) == bool(stack_config.VERSION_PATTERN.match(version))


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
    # Issue 37: every tag that names no release, in any case, and tags that only start with one's name.
    "nvidia/cuda:Latest",
    "nvidia/cuda:main",
    "nvidia/cuda:NIGHTLY",
    "registry:5000/cuda:stable",
    "nvidia/cuda:stable-13.1.1",
    "nvidia/cuda:main-2024.06.01",
]


@pytest.mark.parametrize("image", IMAGES)
def test_policy_image_pinning_agrees_with_the_program(image):
    assert claim_rules.image_is_pinned(image) == (claims_config.image_problem(image) is None)


def test_policy_floating_tags_are_the_programs():
    """The pack cannot import components/: its list of tags that name no release is the program's, kept here."""
    from components.input.fields import FLOATING_TAGS

    assert set(FLOATING_TAGS) == claim_rules.FLOATING_TAGS


def test_policy_copy_of_the_existing_group_type_matches_the_component():
    from components.existing_gpu_node_group import ExistingGpuNodeGroup, ExistingGpuNodeGroupArgs

    source = inspect.getsource(ExistingGpuNodeGroup.__init__)
    assert f'"{planned.EXISTING_GPU_GROUP_TYPE}"' in source
    assert ExistingGpuNodeGroupArgs.__dataclass_fields__


def test_the_import_graph_is_drawn_from_the_same_edges_the_guards_check():
    from tools import import_graph

    graph = import_graph.mermaid()
    assert graph.startswith("graph TD\n")
    assert ("components.config", "components.cel") in import_graph.edges()
    assert ("components.cel", "components.config") not in import_graph.edges()
    assert ("components.config.stack", "components.config.node_groups") in import_graph.edges(modules=True)


def test_policy_copy_of_the_driver_roots_and_the_dra_driver_component_is_the_programs():
    from components import dra_driver

    assert (planned.PRESET_DRIVER_ROOT, planned.OPERATOR_DRIVER_ROOT) == (
        dra_constants.HOST_DRIVER_ROOT,
        dra_constants.OPERATOR_DRIVER_ROOT,
    )
    assert planned.GROUP_LABEL == dra_constants.NODE_GROUP_LABEL
    assert (planned.DRA_DRIVER_COMPONENT_TYPE, planned.PLUGIN_OUTAGE_ACCEPTED) == (
        dra_driver.DRA_DRIVER_TYPE,
        dra_driver.PLUGIN_OUTAGE_ACCEPTED,
    )


@pytest.mark.parametrize("stack", STACKS)
def test_the_pack_reads_each_node_group_range_the_program_gives_it(stack_runs, stack):
    """planned_node_range (the pack's, on engine inputs) and NodeRange (the program's): dev's fixed count, prod's
    fixed and autoscaled groups."""
    config = parsed(stack)
    planned_ranges = {
        field_at(r.inputs, "template", "metadata", "labels", planned.GROUP_LABEL): planned.planned_node_range(
            planned.PlannedResource(r.urn, r.type, r.name, r.inputs)
        )
        for r in stack_runs[stack].of_type(planned.NODE_GROUP_TYPE)
    }
    assert {group.name: group.node_range for group in config.gpu_node_groups}.items() <= planned_ranges.items()
    assert any(group.autoscaling for stack in STACKS for group in parsed(stack).gpu_node_groups)


def _group(props: dict) -> planned.PlannedResource:
    return planned.PlannedResource("urn:group", planned.NODE_GROUP_TYPE, "group", props)


def test_a_node_range_is_the_autoscaling_range_or_the_fixed_count_twice():
    assert NodeRange.of(3, None) == (3, 3)
    assert NodeRange.of(None, Autoscaling(min_nodes=1, max_nodes=4)) == (1, 4)
    assert NodeRange.of(None, None) == (0, 0)
    assert planned.planned_node_range(_group({"fixedNodeCount": 3})) == (3, 3)
    assert planned.planned_node_range(_group({"autoscaling": {"minNodeCount": 1, "maxNodeCount": 4}})) == (1, 4)
    assert planned.planned_node_range(_group({"fixedNodeCount": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"})) is None
