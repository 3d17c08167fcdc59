"""Stack files are read as the Pulumi CLI reads them: YAML 1.2 scalars, declared keys and types, secrets kept secret."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pulumi.runtime import settings
from pulumi.runtime.config import set_all_config

from components.config import ConfigError, parse_stack_config
from components.config.raw import read_raw_config
from components.config.stack_file import (
    SECRET_PLACEHOLDER,
    StackFileError,
    parse_key,
    program_config,
    read_stack_file,
    stack_name_problem,
)
from tests.helpers import ROOT
from tools.plan.mock_engine import run_program

DEV_GROUPS = """  nebius-dra:gpuNodeGroups:
    - name: h200
      platform: gpu-h200-sxm
      preset: 1gpu-16vcpu-200gb
      driversPreset: cuda13.0
      fixedNodeCount: 1
"""


@pytest.fixture
def project(tmp_path) -> Path:
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(ROOT / "__main__.py", tmp_path / "__main__.py")
    return tmp_path


def write_stack(project: Path, body: str, stack: str = "t") -> str:
    (project / f"Pulumi.{stack}.yaml").write_text(body)
    return stack


def stack_with(project: Path, extra: str = "", groups: str = DEV_GROUPS) -> str:
    return write_stack(
        project,
        "config:\n  nebius-dra:parentId: project-e00test\n  nebius-dra:subnetId: vpcsubnet-e00test\n" + extra + groups,
    )


def refusal(project: Path, stack: str) -> str:
    with pytest.raises(StackFileError) as raised:
        read_stack_file(stack, project)
    return str(raised.value)


def test_a_valid_stack_file_reads_with_project_defaults(project):
    values = read_stack_file(stack_with(project), project).values
    assert values["nebius-dra:etcdClusterSize"] == "1"
    assert values["nebius-dra:publicEndpoint"] == "true"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "  nebius-dra:protected: true\n",
            "nebius-dra:protected: is set in Pulumi.t.yaml but Pulumi.yaml does not declare it",
        ),
        (
            "  nebius-dra:config:protected: true\n",
            "nebius-dra:protected: is set in Pulumi.t.yaml but Pulumi.yaml does not declare it",
        ),
        (
            "  nebius-dra:gpuNodeGroup: []\n",
            "nebius-dra:gpuNodeGroup: is set in Pulumi.t.yaml but Pulumi.yaml does not declare it; did you mean nebius-dra:gpuNodeGroups?",
        ),
        (
            "  nebius-dra:publicEndpoint: on\n",
            'nebius-dra:publicEndpoint: got "on", but Pulumi.yaml declares it boolean',
        ),
        (
            "  nebius-dra:systemNodeCount: 1:30\n",
            'nebius-dra:systemNodeCount: got "1:30", but Pulumi.yaml declares it integer',
        ),
        (
            "  nebius-dra:clusterName: 010\n",
            "nebius-dra:clusterName: got 10, but Pulumi.yaml declares it string (quote it",
        ),
        ("  nebius-dra:systemNodeCount: 2.0\n", "got 2.0, but Pulumi.yaml declares it integer"),
        ("  nebius-dra:gpuProducts: [1]\n", "got [1], but Pulumi.yaml declares it array"),
        ("  nebius-dra:draDriverValues: {a: .nan}\n", "a got nan; numbers must be finite"),
        (
            "  nebius-dra:draDriverValues: {a: !!binary aGVsbG8=}\n",
            "a got a YAML bytes, which a stack value cannot hold",
        ),
        ("  nebius-dra:draDriverValues: {a: !!timestamp 2024-01-01}\n", "a got a YAML date"),
        ("  nebius-dra:gpuNodeGroups:\n    secure: v1:abc\n", "is encrypted as a whole (secure:)"),
    ],
)
def test_refused_stack_values_name_the_key(project, line, expected):
    groups = "" if "gpuNodeGroups" in line else DEV_GROUPS
    assert expected in refusal(project, stack_with(project, line, groups))


def test_yaml_1_2_scalars_stay_strings_where_yaml_1_1_converted_them(project):
    values = read_stack_file(
        stack_with(project, "  nebius-dra:clusterName: 2024-01-01\n  nebius-dra:nebiusProfile: on\n"), project
    ).values
    assert values["nebius-dra:clusterName"] == "2024-01-01"
    assert values["nebius-dra:nebiusProfile"] == "on"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("config: [\n", "Pulumi.t.yaml is not valid YAML"),
        ("- a\n- b\n", "expected a map with a config: map of keys"),
        ("config: [1, 2]\n", "expected a map with a config: map of keys"),
    ],
)
def test_unreadable_stack_files_are_refused_with_the_file_named(project, body, expected):
    assert expected in refusal(project, write_stack(project, body))


# Each case of the Pulumi CLI's key rule (sdk/v3 v3.274.0 go/common/resource/config/key.go, ParseKey; hostile review:
# a bare `protect` was read as nebius-dra:protect, and the legacy `nebius-dra:config:protect` refused).
@pytest.mark.parametrize(
    ("key", "read_as"),
    [
        ("nebius-dra:protect", "nebius-dra:protect"),
        ("nebius-dra:config:protect", "nebius-dra:protect"),
        ("kubernetes:context", "kubernetes:context"),
        ("kubernetes:config:context", "kubernetes:context"),
        (":protect", ":protect"),
        ("protect", None),
        ("nebius-dra:other:protect", None),
        ("nebius-dra::protect", None),
        ("nebius-dra:config:protect:x", None),
        ("a:b:c:d", None),
    ],
)
def test_a_key_is_read_exactly_as_the_cli_s_parse_key_reads_it(project, key, read_as):
    assert parse_key(key) == read_as
    stack = stack_with(project, f'  "{key}": false\n')
    if read_as is None:
        assert f"{key}: is not a config key the Pulumi CLI reads" in refusal(project, stack)
    elif read_as == ":protect":  # parsed, but under a namespace no one reads
        assert "it would be dropped; did you mean nebius-dra:protect?" in refusal(project, stack)
    else:
        assert read_stack_file(stack, project).values[read_as] == "false"


def test_a_bare_key_s_refusal_names_the_key_it_was_meant_as(project):
    message = refusal(project, stack_with(project, "  protect: maybe\n"))
    assert "could not parse protect as a configuration key): write <namespace>:<name> (nebius-dra:protect)" in message
    assert "maybe" not in message  # its value is not read, so no second problem about it


@pytest.mark.parametrize("block", ["confg", "Config", "secretprovider"])
def test_an_unknown_top_level_block_is_refused_naming_it_and_the_cli_s_blocks(project, block):
    # A misspelt `config:` held settings the reader dropped (attack 37, F6): the plan ran on 2 system nodes.
    body = f"{block}:\n  nebius-dra:systemNodeCount: 1\nconfig:\n  nebius-dra:parentId: project-e00test\n"
    message = refusal(project, write_stack(project, body))
    assert f'Pulumi.t.yaml: unknown top-level key "{block}"' in message
    assert "a stack file holds only config, secretsprovider, encryptedkey, encryptionsalt, environment" in message


def test_an_esc_environment_is_refused_by_the_offline_reader(project):
    write_stack(project, "environment:\n  - team/prod\nconfig:\n  nebius-dra:parentId: project-e00test\n")
    assert "environment: imports Pulumi ESC environments" in refusal(project, "t")


def test_the_program_run_reports_an_unreadable_stack_file_without_registering(project):
    run = run_program(write_stack(project, "config: [\n"), project_dir=project)
    assert isinstance(run.error, StackFileError)
    assert run.resources == []


def test_secure_values_are_secrets_and_their_ciphertext_is_never_a_value(project):
    secret = (
        "  nebius-dra:draDriverValues:\n    imagePullSecrets:\n      - name:\n          secure: v1:c2VjcmV0Y2lwaGVy\n"
    )
    stack_file = read_stack_file(stack_with(project, secret), project)
    assert "nebius-dra:draDriverValues" in stack_file.secret_keys
    assert "c2VjcmV0Y2lwaGVy" not in stack_file.values["nebius-dra:draDriverValues"]
    assert SECRET_PLACEHOLDER in stack_file.values["nebius-dra:draDriverValues"]


@pytest.mark.parametrize(
    "value",
    ["{secure: v1:AAAA, extra: plain}", "{secure: 5}", "{secure: [v1:AAAA]}", "{Secure: v1:AAAA}"],
)
def test_a_map_is_secret_only_when_secure_is_its_one_key_and_a_string_as_the_cli_reads_it(project, value):
    """The Pulumi CLI's rule (github.com/pulumi/pulumi sdk/go/common/resource/config/object.go, `isSecureValue`): a
    map is a secret only with exactly one key, `secure`, holding a string; any other map is a plain object, its
    values plain (the plan then shows them, and marks nothing secret)."""
    body = f"  nebius-dra:draDriverValues:\n    controller:\n      podAnnotations:\n        b: {value}\n"
    stack_file = read_stack_file(stack_with(project, body), project)
    assert "nebius-dra:draDriverValues" not in stack_file.secret_keys
    assert SECRET_PLACEHOLDER not in stack_file.values["nebius-dra:draDriverValues"]
    secret = stack_with(project, body.replace(value, "{secure: v1:AAAA}"))
    assert "nebius-dra:draDriverValues" in read_stack_file(secret, project).secret_keys


@pytest.mark.parametrize("stack", ["../x", "a/b", "..", ".", "", "dev\n", "x" * 101])
def test_bad_stack_names_are_refused(stack):
    assert stack_name_problem(stack)


@pytest.mark.parametrize("stack", ["dev", "prod", "staging-2", "team_a.dev"])
def test_good_stack_names_pass(stack):
    assert stack_name_problem(stack) is None


@pytest.mark.parametrize(
    "line",
    ['  nebius-dra:systemNodeCount: "3"\n', '  nebius-dra:samplePods: "true"\n', '  nebius-dra:gpuProducts: ["A"]\n'],
)
def test_values_the_cli_writes_back_as_text_are_taken_as_the_cli_takes_them(project, line):
    # `pulumi config set` and `stack init` store typed values as text; the CLI accepts them (sdk/v3
    # v3.274.0 ValidateConfigValue), and so must the offline plan (e2e/cli checks the two agree).
    read_stack_file(stack_with(project, line), project)


@pytest.mark.parametrize(
    ("quoted", "plain"),
    [
        ('  nebius-dra:protect: "true"\n', "  nebius-dra:protect: true\n"),
        ('  nebius-dra:etcdClusterSize: "3"\n', "  nebius-dra:etcdClusterSize: 3\n"),
        ('  nebius-dra:systemNodeCount: "3"\n', "  nebius-dra:systemNodeCount: 3\n"),
    ],
)
def test_a_quoted_value_reaches_the_program_as_the_same_text_as_the_plain_one(project, quoted, plain):
    # The CLI hands the program text either way (attack 37, F7: docs/configuration.md said "never coerced"): the
    # program cannot tell them apart, so the plan does not either, and both plan the same stack.
    values = read_stack_file(stack_with(project, quoted), project).values
    assert values == read_stack_file(stack_with(project, plain), project).values
    assert parse_stack_config(program_config(values), "t") == parse_stack_config(
        program_config(read_stack_file(stack_with(project, plain), project).values), "t"
    )


@pytest.mark.parametrize(("key", "text"), [("protect", "False"), ("etcdClusterSize", " 3"), ("etcdClusterSize", "+3")])
def test_text_the_sdk_getters_would_take_is_refused_by_the_program_and_the_plan(project, key, text):
    # Config.get_bool takes "False" and get_int's int() " 3" and "+3" (pulumi 3.x config.py); the program decodes the
    # text itself, whole (components/config/raw.py), and the offline plan runs that same decoding.
    values = read_stack_file(stack_with(project), project).values
    with pytest.raises(ConfigError, match=f"nebius-dra:{key}"):
        parse_stack_config({**program_config(values), key: text}, "t")
    line = f"  nebius-dra:{key}: {json.dumps(text)}\n"
    with pytest.raises(ConfigError, match=f"nebius-dra:{key}"):
        parse_stack_config(program_config(read_stack_file(stack_with(project, line), project).values), "t")


@pytest.mark.parametrize(
    "line",
    [
        '  nebius-dra:systemNodeCount: "three"\n',
        "  nebius-dra:systemNodeCount: 3.0\n",
        '  nebius-dra:samplePods: "yes"\n',
    ],
)
def test_text_the_cli_cannot_type_is_refused(project, line):
    assert "but Pulumi.yaml declares it" in refusal(project, stack_with(project, line))


LOOK_ALIKES = {
    "case": "Nebius-DRA",
    "hyphen": "nebius\u2010dra",
    "minus": "nebius\u2212dra",
    "underscore": "nebius_dra",
    "cyrillic-e": "n\u0435bius-dra",
    "fullwidth": "\uff4eebius-dra",
    "swapped": "nebuis-dra",
}


@pytest.mark.parametrize("given", list(LOOK_ALIKES.values()), ids=list(LOOK_ALIKES))
def test_a_key_under_a_look_alike_of_the_projects_namespace_is_refused_not_dropped(project, given):
    """`Nebius-DRA:samplePods` or a U+2010 hyphen is no provider's namespace: the program reads only nebius-dra:...,
    so the key was dropped without a word."""
    message = refusal(project, stack_with(project, f"  {given}:samplePods: 'true'\n"))
    assert (
        f"under the namespace {json.dumps(given)}" in message and 'which is not the project\'s "nebius-dra"' in message
    )
    assert "write it as nebius-dra:samplePods" in message
    assert all(f"U+{ord(ch):04X}" in message for ch in given if not ch.isascii())


@pytest.mark.parametrize("namespace", ["nebius", "kubernetes", "nebius-dra-extra-team"])
def test_a_key_no_provider_reads_is_refused_but_the_clis_own_namespace_is_left_to_it(project, namespace):
    message = refusal(project, stack_with(project, f"  {namespace}:something: x\n"))
    assert f"{namespace}:something: is set in Pulumi.t.yaml" in message and "it would be dropped" in message
    read_stack_file(stack_with(project, "  pulumi:something: x\n"), project)


@pytest.mark.parametrize("given", ["Nebius-DRA", "nebius\u2010dra"], ids=["case", "hyphen"])
def test_the_program_refuses_a_look_alike_key_the_engine_hands_it(given):
    """Under an engine (the real CLI passes every key of the stack's config) the program refuses it too."""
    config = dict(read_stack_file("dev").values)
    config[f"{given}:samplePods"] = "true"
    run = run_program("dev", config=config)
    assert run.error is not None and f"{given}:samplePods: is set in the stack's config under the namespace" in str(
        run.error
    )


def test_a_stack_without_a_file_is_refused_naming_the_stacks_there(project):
    """Hostile review: `make plan STACK=nope` said only that Pulumi.nope.yaml is missing."""
    write_stack(project, "config: {}\n", "b")
    write_stack(project, "config: {}\n", "a")
    assert refusal(project, "nope") == f"no stack file Pulumi.nope.yaml in {project}; the stacks there: a, b"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "  nebius:protect: true\n",
            'nebius:protect: is set in Pulumi.t.yaml, but the nebius provider reads no "protect"',
        ),
        ("  kubernetes:kubeconfg: /k\n", "did you mean kubernetes:kubeconfig?"),
        (
            "  nebius-dra-ci-identity:repository: o/r\n",
            'under the namespace "nebius-dra-ci-identity", which neither this program (nebius-dra:...) nor a provider',
        ),
        ("  nebius-dra-ci-identity:protect: true\n", "it would be dropped; did you mean nebius-dra:protect?"),
        (
            '  kubernetes:kubeconfig: "users: [{user: {token: CANARY1234567890}}]"\n',
            "kubernetes:kubeconfig: is set in plain text in Pulumi.t.yaml, but it holds credentials",
        ),
        ("  nebius:token: CANARY1234567890\n", "nebius:token: is set in plain text in Pulumi.t.yaml"),
    ],
)
def test_a_key_of_another_namespace_that_no_one_reads_is_refused(project, line, expected):
    """Hostile review: `nebius:protect` (meant as nebius-dra:protect) and a bootstrap key were dropped silently, and a
    plain-text kubeconfig holding a token was taken."""
    message = refusal(project, stack_with(project, line))
    assert expected in message, message
    assert "CANARY" not in message
    if "nebius:protect" in line:
        assert "did you mean nebius-dra:protect?" in message


@pytest.mark.parametrize(
    "line",
    [
        "  kubernetes:kubeconfig: /home/me/.kube/config\n",
        "  kubernetes:enableServerSideApply: true\n",
        "  nebius:timeout: 2m\n",
        "  nebius:token:\n    secure: AAABAxyz\n",
        "  pulumi:tags:\n    team: ml\n",
    ],
)
def test_a_key_a_provider_the_program_uses_reads_is_taken(project, line):
    read_stack_file(stack_with(project, line), project)


def engine_read(project: Path, stack: str, values: dict[str, str], secret_keys: tuple[str, ...] = ()):
    """`read_raw_config` as the real engine (`pulumi preview`, `up`) runs it: the engine's config set, and no offline
    reader before it."""
    settings.reset_options(project="nebius-dra", stack=stack)
    set_all_config(values, list(secret_keys))
    return read_raw_config(project / "Pulumi.yaml")


BASE = "config:\n  nebius-dra:parentId: project-e00test\n  nebius-dra:subnetId: vpcsubnet-e00test\n"


@pytest.mark.parametrize(
    "extra",
    [
        "  nebius-dra:samplePods: true\n  nebius-dra:config:samplePods: false\n",  # spelt twice: the CLI keeps one
        "  nebius-dra:samplePods: true\n  nebius-dra:samplePods: false\n",  # a YAML key given twice
        "  kubernets:context: x\n",  # a namespace no one reads
        "  nebius:protect: true\n",  # a key the provider does not read
        "  Nebius-DRA:samplePods: true\n",  # a look-alike of the project's namespace
        "  nebius-dra:samplePod: true\n",  # undeclared
        "  samplePods: true\n",  # a bare key
        "  nebius-dra:etcdClusterSize: three\n",  # not the declared type
    ],
    ids=[
        "spelt-twice",
        "yaml-duplicate",
        "foreign-namespace",
        "provider-key",
        "look-alike",
        "undeclared",
        "bare",
        "type",
    ],
)
def test_the_real_engine_checks_the_stack_file_as_the_offline_plan_does(project, extra):
    """Issue 37: under `pulumi preview`/`up` the program read only the engine's values and checked only look-alike
    namespaces among them; the stack file's own problems (a key the CLI keeps one value of, a key no one reads) went
    through. Now the same reader refuses them with the same message."""
    stack = write_stack(project, BASE + extra + DEV_GROUPS)
    offline = refusal(project, stack)
    with pytest.raises(StackFileError) as under_engine:
        engine_read(project, stack, {"nebius-dra:parentId": "project-e00test"})
    assert str(under_engine.value) == offline


def test_the_real_engine_reads_what_only_it_can_and_takes_its_values(project):
    """An ESC environment and a `secure:` value of a non-string key are the engine's to read: not refused there, and
    the program takes the engine's values, not the file's."""
    stack = write_stack(
        project,
        "environment:\n  - team/prod\n" + BASE + "  nebius-dra:etcdClusterSize:\n    secure: v1:abc\n" + DEV_GROUPS,
    )
    assert "environment: imports Pulumi ESC environments" in refusal(project, stack)
    raw = engine_read(project, stack, {"nebius-dra:parentId": "project-e00engine", "nebius-dra:etcdClusterSize": "3"})
    assert raw.values["parentId"] == "project-e00engine" and raw.values["etcdClusterSize"] == "3"


def test_the_real_engine_without_a_stack_file_reads_the_engines_config(project):
    raw = engine_read(project, "nofile", {"nebius-dra:parentId": "project-e00engine"})
    assert raw.values["parentId"] == "project-e00engine"
