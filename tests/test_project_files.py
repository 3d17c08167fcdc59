"""The project's own files agree with each other: Pulumi.yaml, the stack files, the configuration page, requirements."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from components.config.stack import parse_stack_config
from components.config.stack_file import load_stack_config, program_config, project_config_keys
from components.input.fields import LabelKey, LabelValue
from components.input.meaning import field_docs
from components.input.node_groups import GpuNodeGroupInput
from components.input.stack import SECRET_CAPABLE_KEYS, StackInput
from components.labels import tolerations_for
from components.model import Taint
from components.values.kubeconfig import build_kubeconfig
from policies.dra_guardrails import RULES
from policies.dra_guardrails.driver_presets import DRIVER_PRESETS, DRIVER_PRESETS_READ
from tests.helpers import STACKS
from tools import config_docs

ROOT = Path(__file__).resolve().parent.parent
CONFIGURATION = ROOT / "docs" / "configuration.md"
SIMPLE_TYPES = {"string", "integer", "boolean", "array"}


def project() -> dict:
    return yaml.safe_load((ROOT / "Pulumi.yaml").read_text())


def test_project_runs_python_in_the_venv_the_makefile_builds():
    runtime = project()["runtime"]
    assert runtime["name"] == "python"
    assert runtime["options"]["virtualenv"] == "venv"
    assert "VENV := venv" in (ROOT / "Makefile").read_text()


DECLARATION_FIELDS = {"type", "items", "description", "secret", "default", "value"}
UNTYPED_STRUCTURED_KEYS = {
    "nebius-dra:gpuNodeGroups",
    "nebius-dra:userClaimTemplates",
    "nebius-dra:draDriverValues",
    "nebius-dra:gpuMetricsValues",
    "nebius-dra:priceOverrides",
    "nebius-dra:systemNodeStrategy",
    "nebius-dra:systemNodeAutoRepair",
    "nebius-dra:queues",
}


def pulumi_accepts(type_name: str, items: dict | None, value) -> bool:
    """The Pulumi CLI's check of a config value against a declared project type (workspace.ValidateConfigValue)."""
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, str) and value.lstrip("-").isdigit()
        )
    if type_name == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    return (
        isinstance(value, list)
        and items is not None
        and all(pulumi_accepts(items["type"], items.get("items"), item) for item in value)
    )


def test_every_project_key_is_declared_the_way_the_pulumi_cli_accepts():
    """Pulumi's project schema: types string/integer/boolean/array, arrays need `items`, defaults match."""
    for key, spec in project()["config"].items():
        assert key.startswith("nebius-dra:"), key
        assert spec.get("description"), f"{key} has no description"
        assert set(spec) <= DECLARATION_FIELDS, f"{key}: {set(spec) - DECLARATION_FIELDS}"
        if "type" not in spec:
            assert key in UNTYPED_STRUCTURED_KEYS, f"{key} should be typed"
            continue
        assert spec["type"] in SIMPLE_TYPES, f"{key}: {spec['type']}"
        if spec["type"] == "array":
            assert spec.get("items", {}).get("type") in SIMPLE_TYPES, f"{key}: an array needs items with a type"
        if "default" in spec:
            assert pulumi_accepts(spec["type"], spec.get("items"), spec["default"]), (
                f"{key}: default {spec['default']!r}"
            )


def test_stack_files_set_only_declared_keys_with_values_of_the_declared_type():
    declared = project()["config"]
    for stack in STACKS:
        values = yaml.safe_load((ROOT / f"Pulumi.{stack}.yaml").read_text())["config"]
        assert set(values) <= set(declared), set(values) - set(declared)
        for key, value in values.items():
            spec = declared[key]
            if "type" in spec:
                assert pulumi_accepts(spec["type"], spec.get("items"), value), (
                    f"{stack}: {key}={value!r} is not a {spec['type']}"
                )


def test_the_type_check_mirrors_pulumi_on_the_cases_that_matter():
    assert not pulumi_accepts("string", None, 1.34), "an unquoted 1.34 in YAML is a number"
    assert not pulumi_accepts("array", None, ["a"]), "an array without items is refused"
    assert pulumi_accepts("array", {"type": "string"}, ["a"]) and not pulumi_accepts(
        "array", {"type": "string"}, [{"a": 1}]
    )
    assert not pulumi_accepts("integer", None, True) and not pulumi_accepts("boolean", None, "yes")


def test_a_key_left_out_of_the_stack_file_takes_the_declared_default(tmp_path):
    """What a stack leaves out, the program reads as Pulumi.yaml's default: no second fallback in code."""
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    dev = yaml.safe_load((ROOT / "Pulumi.dev.yaml").read_text())["config"]
    minimal = {key: dev[f"nebius-dra:{key}"] for key in ("parentId", "subnetId", "gpuNodeGroups")}
    minimal = {f"nebius-dra:{key}": value for key, value in minimal.items()}
    (tmp_path / "Pulumi.minimal.yaml").write_text(yaml.safe_dump({"config": minimal}))
    left_out = parse_stack_config(program_config(load_stack_config("minimal", tmp_path)), "minimal")
    defaults = {key: spec["default"] for key, spec in project()["config"].items() if key not in minimal}
    (tmp_path / "Pulumi.explicit.yaml").write_text(yaml.safe_dump({"config": {**minimal, **defaults}}))
    assert parse_stack_config(program_config(load_stack_config("explicit", tmp_path)), "minimal") == left_out
    assert left_out.driver.chart == defaults["nebius-dra:draDriverChart"]
    assert left_out.claims.namespace == defaults["nebius-dra:claimNamespace"]


def test_the_configuration_page_documents_every_key():
    page = CONFIGURATION.read_text()
    for key in project_config_keys(ROOT / "Pulumi.yaml"):
        assert re.search(rf"^\| `{re.escape(key)}` \|", page, re.MULTILINE), (
            f"{CONFIGURATION.name} has no row for {key}"
        )


def test_the_policy_docs_describe_every_rule():
    docs = (ROOT / "docs" / "policy-pack.md").read_text()
    for rule in RULES:
        assert re.search(rf"^\| `{re.escape(rule.name)}` \|", docs, re.MULTILINE), f"no row for {rule.name}"


def test_the_node_group_pages_driver_preset_table_is_the_policys():
    readme = (ROOT / "docs" / "node-groups.md").read_text()
    assert f"read on {DRIVER_PRESETS_READ}" in readme
    rows: dict[str, set[str]] = {}
    for minor, presets in re.findall(r"^  \| (1\.\d+) \| [^|]+ \|([^|]*)\|$", readme, re.MULTILINE):
        rows.setdefault(minor, set()).update(re.findall(r"`(cuda[0-9.]+)`", presets))
    listed = {
        minor: {preset for presets in row.values() for preset in presets} for minor, row in DRIVER_PRESETS.items()
    }
    assert {minor: presets for minor, presets in rows.items() if presets} == listed
    assert set(rows) - set(listed) == {"1.34"}, "the page names the one minor without a published row"


def test_ci_runs_the_readmes_test_command():
    readme = (ROOT / "README.md").read_text()
    first_block = re.search(r"```bash\n(.*?)```", readme, re.DOTALL).group(1)
    assert first_block.splitlines()[1].startswith("make test")
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_requirements_are_pinned():
    for name in ("requirements.txt", "requirements-dev.txt", "requirements-verify.txt", "policies/requirements.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "-r")):
                assert re.match(r"^[A-Za-z0-9_.-]+==[0-9][^ ]*$", line), f"{name}: {line}"


def test_kubeconfig_profile_goes_to_the_exec_plugin():
    config = yaml.safe_load(build_kubeconfig("c", "1.2.3.4", "PEM", profile="ci"))
    assert config["clusters"][0]["cluster"]["server"] == "https://1.2.3.4"
    assert config["users"][0]["user"]["exec"]["args"][-2:] == ["--profile", "ci"]
    assert (
        "--profile" not in yaml.safe_load(build_kubeconfig("c", "https://x", "PEM"))["users"][0]["user"]["exec"]["args"]
    )


# Fixed alphabets: a fresh clone then needs no Unicode table, which Hypothesis builds in the health-check window.
names = st.builds(
    lambda first, middle, last: first + middle + last,
    st.sampled_from("az09"),
    st.text(alphabet="az09-", max_size=20),
    st.sampled_from("az09"),
)


@given(prefix=st.one_of(st.just(""), names.map(lambda n: f"{n}.example.com/")), name=names)
def test_well_formed_label_keys_are_accepted(prefix, name):
    assert TypeAdapter(LabelKey).validate_python(prefix + name) == prefix + name


@given(st.text(min_size=64, max_size=80, alphabet="abc"))
def test_overlong_label_values_are_refused(value):
    with pytest.raises(ValidationError):
        TypeAdapter(LabelValue).validate_python(value)


@given(
    st.lists(
        st.builds(
            Taint, key=names, value=st.one_of(st.just(""), names), effect=st.sampled_from(["NoSchedule", "NoExecute"])
        )
    )
)
def test_tolerations_cover_every_taint_once(taints):
    tolerations = tolerations_for(taints + taints)
    assert len(tolerations) == len(set(taints))
    for taint in taints:
        assert any(
            t["key"] == taint.key and t["effect"] == taint.effect and t.get("value", "") == taint.value
            for t in tolerations
        )


def test_the_configuration_page_names_exactly_the_keys_that_may_be_secrets():
    """The page's Secrets paragraph and the config table's `secret` rows say what SECRET_CAPABLE_KEYS allows."""
    readme = CONFIGURATION.read_text()
    paragraph = re.search(r"^\*\*Secrets\.\*\*(.*?)\n\n", readme, re.MULTILINE | re.DOTALL)
    assert paragraph, f"{CONFIGURATION.name} has no **Secrets.** paragraph"
    keys = set(project_config_keys())
    named = {word for word in re.findall(r"`([A-Za-z]+)[`.]", paragraph.group(1)) if word in keys}
    assert named == set(SECRET_CAPABLE_KEYS)
    assert "Only `draDriverValues` may be" not in readme and "The only key that may be a secret" not in readme


def test_the_configuration_pages_tables_of_settings_are_the_models():
    """Each field's meaning is written once, on the model; the configuration page's tables are rendered from it."""
    page = CONFIGURATION.read_text()
    assert config_docs.rendered(page) == page, "run python -m tools.config_docs"
    assert config_docs.main(["--check"]) == 0


def test_a_meanings_link_to_a_section_points_at_the_page_that_has_it():
    """Meanings link to a section by its anchor alone; the page gets the link to wherever that section lives."""
    page = CONFIGURATION.read_text()
    assert config_docs.linked("[x](#gpu-metrics) [p](prices/nebius.yaml)", page) == (
        "[x](gpu-metrics.md#gpu-metrics) [p](../prices/nebius.yaml)"
    )
    assert config_docs.linked("[x](#stack-files-secrets-and-editor-support)", page) == (
        "[x](#stack-files-secrets-and-editor-support)"
    )
    with pytest.raises(config_docs.StaleMarkersError, match="#no-such-section"):
        config_docs.linked("[x](#no-such-section)", page)


def test_the_project_files_config_block_is_the_models():
    """Pulumi.yaml's types, defaults and descriptions are written from each key's model field and Setting."""
    text = (ROOT / "Pulumi.yaml").read_text()
    assert config_docs.rendered_project(text) == text, "run python -m tools.config_docs"
    assert set(project()["config"]) == {f"nebius-dra:{key}" for key in StackInput.model_fields}


def test_the_declared_types_follow_the_model_annotations():
    assert config_docs.project_type(StackInput.model_fields["etcdClusterSize"].annotation) == {"type": "integer"}
    assert config_docs.project_type(StackInput.model_fields["gpuProducts"].annotation) == {
        "type": "array",
        "items": {"type": "string"},
    }
    assert config_docs.project_type(StackInput.model_fields["userClaimTemplates"].annotation) == {}


def test_a_model_field_without_its_meaning_is_refused():
    class Undocumented(GpuNodeGroupInput):
        extra: int = 0

    with pytest.raises(ValueError):
        field_docs(Undocumented)


# A value no shell may parse: both quotes, a ';', a backtick command (attack 37, F11g: STACK_FILE
# "x'; touch /tmp/pwned; echo '" ran touch through `make -n plan`), and what make itself would expand: a variable
# given on its command line is recursively expanded (GNU make manual 6.10), so `$(id)` became nothing and `$$` a `$`
# (hostile review: POLICY_CONFIG='$(id)' reached no tool, silently).
HOSTILE = "x'\"; touch {marker}; echo `touch {marker}` $(id) $$ '"
MAKE_CALLS = {
    "plan": ["STACK_FILE", "FORMAT", "POLICY_CONFIG", "BASELINE", "BASE", "OUT"],
    "cost": ["STACK", "FORMAT", "BASE"],
    "fuzz": ["FUZZ_SECONDS", "FUZZ_SCALE", "SEED"],
    "e2e": ["E2E"],
    "verify": ["STACK"],
    "new-stack": ["NAME", "PARENT_ID", "SUBNET_ID", "AFTER", "REPOSITORY", "REPOSITORY_OWNER_ID", "REPOSITORY_ID"],
}


@pytest.mark.parametrize("target", sorted(MAKE_CALLS))
def test_make_hands_every_variable_to_the_tool_as_given_and_no_shell_parses_it(target, tmp_path):
    marker = tmp_path / "pwned"
    value = HOSTILE.format(marker=marker)
    # PY is a stand-in that prints its arguments, one a line: what the tool would receive.
    printer = tmp_path / "argv"
    printer.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    printer.chmod(0o755)
    variables = [f"{name}={value}" for name in MAKE_CALLS[target]]
    make = ["make", "--no-print-directory", "-o", "venv/.installed", target, f"PY={printer}", *variables]
    dry = subprocess.run([*make[:1], "-n", *make[1:]], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0 and "touch" not in dry.stdout, dry.stdout
    made = subprocess.run(make, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    # Each variable reaches a command whole, as `--option=VALUE` or alone (e2e's reaches two: its builds, then pytest).
    whole = [line for line in made.stdout.splitlines() if line == value or line.endswith(f"={value}")]
    assert len(whole) >= len(variables), made.stdout
    assert not marker.exists()


@pytest.mark.parametrize(
    ("target", "variable", "refusal"),
    [
        (
            "new-stack",
            "NAME=-X",
            "make new-stack: NAME=\"-X\" starts with '-', which `pulumi stack init` reads as an option",
        ),
        (
            "cost",
            "BASE=--output=x",
            '--base "<10 characters: letters, -=; hidden: may be a credential>" is not a git revision of this repository',
        ),
        ("e2e", "E2E=-x", "python -m tools.ci_run: E2E='-x': it names no path; E2E takes paths under"),
        ("e2e", "E2E=-k x", "python -m tools.ci_run: E2E='-k x': it names no path; E2E takes paths under"),
        ("e2e", "E2E=/etc", "python -m tools.ci_run: E2E='/etc': '/etc' is not under this repository's e2e/"),
    ],
)
def test_a_value_starting_with_a_dash_gets_the_tools_own_refusal_not_argparses_usage(target, variable, refusal):
    """Attack 2, #17: make passes each value as `--option=VALUE`, so argparse never reads `-x` as an option."""
    make = ["make", "--no-print-directory", "-o", "venv/.installed", target, variable]
    made = subprocess.run(make, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert made.returncode == 2 and refusal in made.stderr, made.stderr
    assert "usage:" not in made.stderr and "expected one argument" not in made.stderr


def make_plan(tmp_path: Path, *variables: str) -> subprocess.CompletedProcess[str]:
    """`make plan` with an argv printer for PY: what the plan would receive, one argument a line."""
    printer = tmp_path / "argv"
    printer.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    printer.chmod(0o755)
    make = ["make", "--no-print-directory", "-o", "venv/.installed", "plan", f"PY={printer}", *variables]
    return subprocess.run(make, cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("variable", "option"), [("NO_BASE", "--no-base"), ("GRAPH", "--graph")])
def test_a_make_switch_takes_1_or_0_and_refuses_any_other_value_naming_it(variable, option, tmp_path):
    """Hostile review: NO_BASE=0 turned the base comparison off, as any non-empty value did."""
    assert option in make_plan(tmp_path, f"{variable}=1").stdout.splitlines()
    for off in (f"{variable}=0", f"{variable}="):
        made = make_plan(tmp_path, off)
        assert made.returncode == 0 and option not in made.stdout.splitlines(), made.stdout
    for value in ("yes", "no", "1 1", "$(id)"):
        made = make_plan(tmp_path, f"{variable}={value}")
        assert made.returncode == 2 and f"{variable}={value}: give 1 to " in made.stderr, made.stderr
        assert ", 0 to " in made.stderr and "or leave it out" in made.stderr and "argv" not in made.stdout


@pytest.mark.parametrize(
    ("target", "variable", "takes"),
    [
        ("plan", "POLICY_CONFIG", "a policy config file"),
        ("plan", "BASELINE", "a JSON plan"),
        ("plan", "BASE", "a git revision"),
        ("plan", "OUT", "a folder or none"),
        ("cost", "BASE", "a git revision"),
        ("plan", "STACK_FILE", "a stack file such as Pulumi.dev.yaml"),
        ("cost", "STACK_FILE", "a stack file such as Pulumi.dev.yaml"),
    ],
)
def test_a_make_variable_given_empty_stops_make_naming_it_rather_than_dropping_its_option(
    target, variable, takes, tmp_path
):
    """Hostile review: `make plan POLICY_CONFIG=` (a script's unset `$PC`) planned with the pack's defaults, exit 0;
    `BASELINE=` compared with the last commit, `OUT=` wrote build/plan, `STACK_FILE=` planned and priced dev."""
    printer = tmp_path / "argv"
    printer.write_text('#!/bin/sh\nprintf "%s\\n" "$@"\n')
    printer.chmod(0o755)
    make = ["make", "--no-print-directory", "-o", "venv/.installed", target, f"PY={printer}", f"{variable}="]
    made = subprocess.run(make, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert made.returncode == 2 and f"{variable}= is empty: give {takes}, or leave {variable} out" in made.stderr
    assert made.stdout == "", made.stdout
    left_out = subprocess.run(make[:-1], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert left_out.returncode == 0 and "--" + variable.lower().replace("_", "-") not in left_out.stdout


@pytest.mark.parametrize("target", ["plan", "cost"])
def test_make_prints_only_the_tools_output_so_a_json_plan_can_be_redirected(target, tmp_path):
    """`make plan FORMAT=json > plan.json` is a JSON plan (a later --baseline): make echoes no command line there."""
    offline = ["NO_BASE=1"] if target == "plan" else []
    made = subprocess.run(
        ["make", "--no-print-directory", "-o", "venv/.installed", target, "FORMAT=json", *offline],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    json.loads(made.stdout)
