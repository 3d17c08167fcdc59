"""Every invalid configuration stops the real program with a clear message and registers nothing."""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

import pulumi_nebius
import pytest

from components.config.errors import ConfigError, ConfigProblems
from components.config.node_groups import parse_gpu_node_groups
from components.dra_minors import SUPPORTED_MINORS
from components.gpu_platforms import GPU_PLATFORMS
from components.input.fields import CPU_PRESET_PATTERN, GPU_PRESET_PATTERN
from components.input.node_groups import GpuNodeGroupInput
from components.resource_presets import OFFERED_PRESETS
from tools.plan.mock_engine import run_program
from tools.stack_schema import SCHEMA_FILE

GROUPS_KEY = "nebius-dra:gpuNodeGroups"
CONFIGURATION_PAGE = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


def with_groups(config: dict[str, str], groups: list[dict]) -> dict[str, str]:
    return {**config, GROUPS_KEY: json.dumps(groups)}


def dev_group(**changes) -> dict:
    group = {
        "name": "h200",
        "platform": "gpu-h200-sxm",
        "preset": "1gpu-16vcpu-200gb",
        "driversPreset": "cuda13.0",
        "fixedNodeCount": 1,
    }
    group.update(changes)
    return {key: value for key, value in group.items() if value is not None}


def refused(config: dict[str, str]) -> str:
    run = run_program("dev", config=config)
    assert isinstance(run.error, ConfigError), run.error
    assert run.resources == [], [r.name for r in run.resources]
    return str(run.error)


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("1.33", 'got "1.33": DRA\'s resource.k8s.io/v1 API is GA from Kubernetes 1.34'),
        ("1.34.1", 'got "1.34.1": Nebius mk8s takes no patch version; write "1.34"'),
        ("1.3", "quote the version"),
        ("v1.34", 'got "v1.34"; allowed: MAJOR.MINOR'),
    ],
)
def test_bad_kubernetes_version(stack_config, version, expected):
    message = refused({**stack_config("dev"), "nebius-dra:kubernetesVersion": version})
    assert "nebius-dra:kubernetesVersion" in message
    assert expected in message


@pytest.mark.parametrize("version", ["1.99", "1.37", "1.37-nebius-node.1", "2.0", "1.034", "1.35-nebius-node.1\n"])
def test_a_minor_without_dra_rules_is_refused_naming_the_minors_that_have_them(stack_config, version):
    message = refused({**stack_config("dev"), "nebius-dra:kubernetesVersion": version})
    (line,) = [line for line in message.splitlines() if "nebius-dra:kubernetesVersion:" in line]
    assert f"got {json.dumps(version)}" in line
    allowed = " or ".join([", ".join(f'"{minor}"' for minor in SUPPORTED_MINORS[:-1]), f'"{SUPPORTED_MINORS[-1]}"'])
    assert line.endswith(f"of a minor the stack has DRA rules for (policies/dra_minors.json): {allowed}")


@pytest.mark.parametrize("version", ["1.35-nebius-node." + "9" * 400, "1." + "9" * 100])
def test_an_overlong_kubernetes_version_is_one_problem_line(stack_config, version):
    message = refused({**stack_config("dev"), "nebius-dra:kubernetesVersion": version})
    lines = [line for line in message.splitlines() if "nebius-dra:kubernetesVersion:" in line]
    assert len(lines) == 1, lines
    assert "(1 problem" in message.splitlines()[0]


@pytest.mark.parametrize("version", [*SUPPORTED_MINORS, "1.34-nebius-node.2"])
def test_good_kubernetes_versions_run(stack_config, version):
    run = run_program("dev", config={**stack_config("dev"), "nebius-dra:kubernetesVersion": version})
    assert run.error is None


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"autoscaling": {"min": 1, "max": 2}},
            "set exactly one of fixedNodeCount or autoscaling: {min, max}; got both",
        ),
        ({"fixedNodeCount": None}, "got neither"),
        (
            {"fixedNodeCount": None, "autoscaling": {"min": 3, "max": 2}},
            "autoscaling.min (3) is greater than autoscaling.max (2)",
        ),
        (
            {"fixedNodeCount": None, "autoscaling": {"min": 0, "max": 2}},
            "cannot scale a group whose pods claim DRA devices up from zero nodes",
        ),
        ({"platform": "cpu-d3"}, 'platform got "cpu-d3"; gpuNodeGroups takes GPU platforms only'),
        (
            {"platform": "gpu-h20-sxm"},
            'platform got "gpu-h20-sxm", which is no GPU platform Nebius lists; did you mean gpu-h200-sxm? (known: '
            "gpu-l40s-a, gpu-l40s-d, gpu-h100-sxm, gpu-h200-sxm,",
        ),
        ({"infiniband": True}, "infiniband is true but nebius-dra:infinibandFabric is not set"),
        ({"labels": {"bad key!": "x"}}, 'labels key "bad key!" is malformed; expected [prefix/]name'),
        ({"labels": {"team": "no spaces"}}, 'labels.team got "no spaces"'),
        ({"labels": {"nvidia.com/gpu.present": "false"}}, "is set by the stack"),
        ({"labels": {"nebius-dra/node-group": "other"}}, 'label nebius-dra/node-group is set by the stack to "h200"'),
        ({"labels": {"nebius-dra/driver-mode": "operator"}}, "label nebius-dra/driver-mode is set by the stack to"),
        ({"labels": {"nebius-dra/role": "system"}}, "label nebius-dra/role marks the stack's system nodes"),
        (
            {"taints": [{"key": "gpu", "value": "x", "effect": "Sometimes"}]},
            'taints[0].effect got "Sometimes"; allowed: NoSchedule, PreferNoSchedule, NoExecute',
        ),
        (
            {"taints": [{"key": "-gpu", "value": "x", "effect": "NoSchedule"}]},
            'taints[0].key got "-gpu"; expected [prefix/]name',
        ),
        ({"taints": "gpu=true:NoSchedule"}, "taints got"),
        ({"driversPreset": "latest"}, 'driversPreset got "latest"'),
        ({"fixedNodeCount": 0}, "fixedNodeCount got 0; expected a whole number from 1 to 100"),
        ({"preset": "16vcpu-64gb"}, 'preset got "16vcpu-64gb"'),
        # Attack 2, A16: no GPU node, and more GPUs than a Nebius node has (a multi-gpu template of 99).
        ({"preset": "0gpu-128vcpu-1600gb"}, 'preset got "0gpu-128vcpu-1600gb"; expected a GPU preset'),
        ({"preset": "9gpu-128vcpu-1600gb"}, "G from 1 to 8"),
        ({"preset": "8gpu-0vcpu-1600gb"}, 'preset got "8gpu-0vcpu-1600gb"'),
        (
            {"fixedNodecount": 1},
            'unknown field(s) "fixedNodecount"; did you mean fixedNodeCount?; allowed: name, platform',
        ),
    ],
)
def test_bad_gpu_group(stack_config, changes, expected):
    message = refused(with_groups(stack_config("dev"), [dev_group(**changes)]))
    assert "nebius-dra:gpuNodeGroups entry h200" in message
    assert expected in message


def test_duplicate_group_names(stack_config):
    message = refused(with_groups(stack_config("dev"), [dev_group(), dev_group()]))
    assert 'nebius-dra:gpuNodeGroups: name "h200" is used by more than one group' in message


def test_every_problem_is_reported_at_once(stack_config):
    config = with_groups(
        {**stack_config("dev"), "nebius-dra:kubernetesVersion": "1.33"}, [dev_group(platform="cpu-d3")]
    )
    message = refused(config)
    assert "2 problems" in message
    assert "kubernetesVersion" in message and "platform" in message


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("nebius-dra:parentId", "", "nebius-dra:parentId: is required to create the cluster"),
        ("nebius-dra:etcdClusterSize", "2", "nebius-dra:etcdClusterSize: got 2; allowed: 1 or 3"),
        ("nebius-dra:systemNodeCount", "many", 'nebius-dra:systemNodeCount: got "many"; expected a whole number'),
        ("nebius-dra:publicEndpoint", "yes", 'nebius-dra:publicEndpoint: got "yes"; expected true or false'),
        ("nebius-dra:systemNodePlatform", "gpu-h100-sxm", "needs a CPU platform"),
        (GROUPS_KEY, "[]", "expected a non-empty list of GPU node groups"),
        (GROUPS_KEY, "not yaml: [", "is not structured YAML/JSON"),
        (
            "nebius-dra:draPluginOutageAccepted",
            '["h100"]',
            'nebius-dra:draPluginOutageAccepted: names "h100", which no entry of gpuNodeGroups is; allowed: h200',
        ),
    ],
)
def test_bad_scalar_keys(stack_config, key, value, expected):
    assert expected in refused({**stack_config("dev"), key: value})


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"fixedNodeCont": 1, "fixedNodeCount": None},
            'has unknown field(s) "fixedNodeCont"; did you mean fixedNodeCount?',
        ),
        (
            {"taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedul"}]},
            'taints[0].effect got "NoSchedul"; did you mean NoSchedule?',
        ),
        ({"labelz": {}}, 'has unknown field(s) "labelz"; did you mean labels?'),
    ],
)
def test_a_misspelt_field_or_enum_value_gets_the_close_known_one(stack_config, changes, expected):
    assert expected in refused(with_groups(stack_config("dev"), [dev_group(**changes)]))


def test_no_suggestion_when_nothing_known_is_close(stack_config):
    message = refused(with_groups(stack_config("dev"), [dev_group(zzzz=1)]))
    assert 'has unknown field(s) "zzzz"; allowed:' in message


def test_the_platform_help_names_every_platform_the_program_takes():
    """The field's rule, its row in the docs and the schema's names are generated from the table the program judges
    a platform by, so a platform it takes (gpu-b200-sxm, which Nebius lists beside gpu-b200-sxm-a) is never missing
    from the help, and the help never lists one it refuses."""
    field = GpuNodeGroupInput.model_fields["platform"]
    assert field.description == f"expected a GPU platform Nebius lists: {', '.join(GPU_PLATFORMS)}"
    (row,) = [line for line in CONFIGURATION_PAGE.read_text().splitlines() if line.startswith("| `platform` |")]
    assert re.findall(r"`(gpu-[a-z0-9-]+)`", row) == list(GPU_PLATFORMS)
    schema = json.loads(SCHEMA_FILE.read_text())
    assert schema["$defs"]["GpuNodeGroupInput"]["properties"]["platform"]["enum"] == list(GPU_PLATFORMS)
    assert "gpu-b200-sxm" in GPU_PLATFORMS and "gpu-b200-sxm-a" in GPU_PLATFORMS


@pytest.mark.parametrize("platform", GPU_PLATFORMS)
def test_every_platform_the_help_lists_passes_the_platform_check(stack_config, platform):
    run = run_program("dev", config=with_groups(stack_config("dev"), [dev_group(platform=platform)]))
    assert run.error is None or "platform got" not in str(run.error), run.error


def test_a_platform_off_the_table_is_refused_with_the_closest_and_every_known_name(stack_config):
    message = refused(with_groups(stack_config("dev"), [dev_group(platform="gpu-b200-sxm-b")]))
    assert (
        'platform got "gpu-b200-sxm-b", which is no GPU platform Nebius lists; did you mean gpu-b200-sxm-a?' in message
    )
    assert f"(known: {', '.join(GPU_PLATFORMS)}; policies/dra_guardrails/driver_presets.json, read " in message


@pytest.mark.parametrize(
    ("platform", "preset", "offered"),
    [
        # Issue 37: a preset of the right shape that the platform does not have planned with exit status 0.
        ("gpu-h200-sxm", "4gpu-64vcpu-800gb", "1gpu-16vcpu-200gb, 8gpu-128vcpu-1600gb"),
        ("gpu-b200-sxm-a", "8gpu-128vcpu-1600gb", "1gpu-20vcpu-224gb, 8gpu-160vcpu-1792gb"),
    ],
)
def test_a_preset_nebius_does_not_offer_on_the_platform_is_refused_with_the_offered_ones(
    stack_config, platform, preset, offered
):
    message = refused(with_groups(stack_config("dev"), [dev_group(platform=platform, preset=preset)]))
    row = OFFERED_PRESETS[platform]
    assert (
        f'{GROUPS_KEY} entry h200: preset got "{preset}", which Nebius does not offer on platform "{platform}" '
        f"(offered: {offered}; components/resource_presets.json, read {row.read} from {row.source}); if Nebius offers "
        "it now (`nebius compute platform list`), add it to that row with its source"
    ) in message


def test_every_gpu_platform_the_driver_table_offers_takes_a_preset(stack_config):
    """Attack round 5: gpu-rtx6000-a had no row of presets, so no stack could use a platform the driver table offers."""
    assert set(GPU_PLATFORMS) <= set(OFFERED_PRESETS)
    stack = {**stack_config("dev"), "nebius-dra:kubernetesVersion": "1.36"}
    run = run_program(
        "dev", config=with_groups(stack, [dev_group(platform="gpu-rtx6000-a", preset="1gpu-24vcpu-218gb")])
    )
    assert run.error is None, run.error


def test_a_system_preset_nebius_does_not_offer_on_its_platform_is_refused(stack_config):
    message = refused({**stack_config("dev"), "nebius-dra:systemNodePreset": "3vcpu-12gb"})
    assert (
        'nebius-dra:systemNodePreset: got "3vcpu-12gb", which Nebius does not offer on nebius-dra:systemNodePlatform '
        '"cpu-d3" (offered: 2vcpu-8gb, 4vcpu-16gb,'
    ) in message


def test_a_misspelt_system_platform_is_one_problem_not_a_preset_one_too(stack_config):
    """cpu-d9 is a slip for cpu-d3: the price check names it with its closest platform, and the preset waits."""
    message = refused({**stack_config("dev"), "nebius-dra:systemNodePlatform": "cpu-d9"})
    assert "1 problem)" in message and "did you mean cpu-d3?" in message and "systemNodePreset" not in message


@pytest.mark.parametrize(
    ("platform", "preset"),
    [
        (platform, preset)
        for platform, row in OFFERED_PRESETS.items()
        for preset in row.presets
        if platform.startswith("gpu-")
    ],
)
def test_every_preset_the_table_offers_passes_the_preset_check(platform, preset):
    problems = ConfigProblems()
    parse_gpu_node_groups([GpuNodeGroupInput(**dev_group(platform=platform, preset=preset))], "", problems)
    assert not [line for line in problems.lines if "preset got" in line], problems.lines


def test_every_row_of_the_preset_table_names_a_known_platform_its_source_and_a_past_day():
    today = datetime.datetime.now(datetime.UTC).date()
    for platform, row in OFFERED_PRESETS.items():
        assert platform in GPU_PLATFORMS or platform.startswith("cpu-"), platform
        assert row.source.startswith("https://") and datetime.date.fromisoformat(row.read) <= today, (platform, row)
        assert row.presets and len(set(row.presets)) == len(row.presets), (platform, row.presets)
        pattern = GPU_PRESET_PATTERN if platform.startswith("gpu-") else CPU_PRESET_PATTERN
        assert all(re.fullmatch(pattern.removesuffix("$"), preset) for preset in row.presets), (platform, row.presets)


def test_every_gpu_platform_the_provider_documents_is_in_the_one_platform_table():
    """The platforms pulumi-nebius 0.6.73 names in its node-group docs (`os`: "Supported platform / k8s version / OS /
    driver presets combinations") are known to the program, so that the table refuses misspellings only."""
    docs = (Path(pulumi_nebius.__file__).parent / "outputs.py").read_text(encoding="utf-8")
    documented = set(re.findall(r"\bgpu-[a-z0-9]+(?:-[a-z0-9]+)*\b", docs))
    assert documented and documented <= set(GPU_PLATFORMS), documented - set(GPU_PLATFORMS)


@pytest.mark.parametrize("preset", ["0vcpu-0gb", "0vcpu-16gb", "4vcpu-0gb"])
def test_a_system_preset_of_no_cpu_or_no_memory_is_refused(stack_config, preset):
    """Attack 2, A16: `0vcpu-0gb` was planned and priced at $0.00."""
    message = refused({**stack_config("dev"), "nebius-dra:systemNodePreset": preset})
    assert (
        f'nebius-dra:systemNodePreset: got "{preset}"; expected a CPU preset <C>vcpu-<M>gb, C and M from 1' in message
    )
