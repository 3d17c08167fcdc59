"""The offline plan: stable files, a complete graph and tree, policy verdicts that gate, JSON that parses."""

from __future__ import annotations

import hashlib
import itertools
import json
import random
import re
from pathlib import Path

import pytest

from tests.helpers import STACKS
from tools.plan import __main__ as plan
from tools.plan.files import MARKER, MARKER_TEXT, api_version_and_kind, is_kubernetes_object, plan_files
from tools.plan.graph import DURATION_ESTIMATES, critical_path, dependency_edges, provider_urn, render_mermaid
from tools.plan.mock_engine import RegisteredResource
from tools.plan.model import build_plan
from tools.plan.tree import build_tree, kind_of, render_tree
from tools.plan.values import SECRET_PLACEHOLDER, mock_id_references, presentable

MERMAID_NODE = re.compile(r'^\s*(?:subgraph )?(\w+)\["[^"]*<br/>([^"]+)"\]$')
MERMAID_EDGE = re.compile(r'^\s*(\w+) (?:-->|-\.->)\|"([^"]*)"\| (\w+)$')


def _files(directory: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()
    }


def _inputs(resources: list[RegisteredResource]) -> dict[str, dict]:
    references = mock_id_references(resources)
    return {resource.urn: presentable(resource.inputs, references) for resource in resources}


def _registered_edges(resources: list[RegisteredResource]) -> set[tuple[str, str, str]]:
    """(dependency, dependent, why) straight from the registrations, without the plan's own code."""
    edges = set()
    for resource in resources:
        edges.update((urn, resource.urn, "") for urn in resource.dependencies)
        edges.update((urn, resource.urn, prop) for prop, urns in resource.property_dependencies.items() for urn in urns)
        if resource.provider:
            edges.add((resource.provider.rsplit("::", 1)[0], resource.urn, "provider"))
    return edges


@pytest.mark.parametrize("stack", STACKS)
def test_two_runs_write_identical_files(stack, tmp_path):
    build_plan(stack, out=tmp_path / "first")
    build_plan(stack, out=tmp_path / "second")
    first, second = _files(tmp_path / "first" / stack), _files(tmp_path / "second" / stack)
    assert first and first == second


def test_files_do_not_depend_on_registration_order(prod_run):
    shuffled = list(prod_run.resources)
    random.Random(7).shuffle(shuffled)
    assert plan_files(shuffled, _inputs(shuffled)) == plan_files(prod_run.resources, _inputs(prod_run.resources))
    assert render_tree("t", build_tree(shuffled, {})) == render_tree("t", build_tree(prod_run.resources, {}))


@pytest.mark.parametrize("stack", STACKS)
def test_every_kubernetes_object_and_helm_release_gets_one_file(stack, stack_runs):
    resources = stack_runs[stack].resources
    files = plan_files(resources, _inputs(resources))
    objects = [r for r in resources if is_kubernetes_object(r.type)]
    releases = [r for r in resources if r.type == "kubernetes:helm.sh/v3:Release"]
    assert len([path for path in files if path.startswith("kubernetes/")]) == len(objects)
    assert len([path for path in files if path.startswith("helm/")]) == len(releases)
    assert releases, "each stack installs at least the DRA driver"
    for path, text in files.items():
        assert not [mock_id for mock_id in mock_id_references(resources) if mock_id in text], f"{path} leaks a mock ID"


def test_a_second_run_removes_files_of_objects_no_longer_planned(tmp_path):
    build_plan("dev", out=tmp_path)
    stale = tmp_path / "dev" / "kubernetes" / "gone" / "pod-old.yaml"
    stale.parent.mkdir(parents=True)
    stale.write_text("kind: Pod\n")
    with (tmp_path / "dev" / MARKER).open("a") as marker:  # as a run that planned the Pod recorded it
        marker.write(f"{hashlib.sha256(stale.read_bytes()).hexdigest()}  kubernetes/gone/pod-old.yaml\n")
    result = build_plan("dev", out=tmp_path).files
    assert result is not None and not stale.exists() and not stale.parent.exists()
    assert result.removed == ["kubernetes/gone/pod-old.yaml"] and result.kept == []


def test_a_directory_the_plan_did_not_write_is_left_alone(tmp_path):
    precious = tmp_path / "dev" / "notes.txt"
    precious.parent.mkdir()
    precious.write_text("mine\n")
    assert plan.main(["--stack", "dev", "--out", str(tmp_path)]) == plan.EXIT_PROGRAM
    assert precious.read_text() == "mine\n"
    assert sorted(p.name for p in precious.parent.iterdir()) == ["notes.txt"]


def test_the_marker_lists_the_files_the_run_wrote_with_their_digests(tmp_path):
    files = build_plan("dev", out=tmp_path).files
    assert files is not None
    listed = (tmp_path / "dev" / MARKER).read_text().removeprefix(MARKER_TEXT).splitlines()
    expected = sorted([*files.written, *files.unchanged])
    assert listed == [f"{hashlib.sha256((tmp_path / 'dev' / f).read_bytes()).hexdigest()}  {f}" for f in expected]
    assert listed


@pytest.mark.parametrize("placed", ["my-notes.md", "kubernetes/mine.yaml", "helm/notes/ours.values.yaml"])
def test_a_file_the_plan_did_not_write_in_its_own_directory_is_refused_and_kept(tmp_path, capsys, placed):
    """A plan-made directory is cleaned of the files an earlier run wrote, never of one a user put beside them."""
    assert plan.main(["--stack", "dev", "--out", str(tmp_path)]) == plan.EXIT_OK
    precious = tmp_path / "dev" / placed
    precious.parent.mkdir(parents=True, exist_ok=True)
    precious.write_text("precious\n")
    before = {path: path.read_bytes() for path in (tmp_path / "dev").rglob("*") if path.is_file()}
    capsys.readouterr()
    assert plan.main(["--stack", "dev", "--out", str(tmp_path)]) == plan.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert f"{tmp_path / 'dev'} holds {precious}, which the plan did not write" in err, err
    assert {path: path.read_bytes() for path in (tmp_path / "dev").rglob("*") if path.is_file()} == before


@pytest.mark.parametrize(
    "marker",
    [
        "Written by `python -m tools.plan`: every other file ... each run.\n",
        "Written by ...\nkubernetes/gone/pod-old.yaml\n",
    ],
    ids=["one-line", "list-without-digests"],
)
def test_a_marker_of_an_earlier_version_is_trusted_for_nothing(tmp_path, capsys, marker):
    """An earlier version's marker records no digest, so it cannot tell the plan's files from edited ones: the run
    is refused, naming the marker, and no file is deleted."""
    build_plan("dev", out=tmp_path)
    (tmp_path / "dev" / MARKER).write_text(marker)
    stale = tmp_path / "dev" / "kubernetes" / "gone" / "pod-old.yaml"
    stale.parent.mkdir(parents=True)
    stale.write_text("kind: Pod\n")
    before = _files(tmp_path / "dev")
    capsys.readouterr()
    assert plan.main(["--stack", "dev", "--out", str(tmp_path)]) == plan.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert f"{tmp_path / 'dev' / MARKER} does not start with the plan's header" in err, err
    assert "the plan trusts none of its list and changed nothing" in err
    assert _files(tmp_path / "dev") == before


@pytest.mark.parametrize("stack", STACKS)
def test_mermaid_names_every_resource_and_every_registered_edge(stack, stack_runs):
    resources = stack_runs[stack].resources
    mermaid = render_mermaid(build_tree(resources, {}), dependency_edges(resources))
    names = {}
    drawn = {}
    for line in mermaid:
        if node := MERMAID_NODE.match(line):
            names[node[2]] = node[1]
        elif edge := MERMAID_EDGE.match(line):
            drawn[(edge[1], edge[3])] = edge[2].split(", ")
    assert len({r.name for r in resources}) == len(resources), "the test maps Mermaid ids back by name"
    assert {r.name for r in resources} <= set(names)
    ids = {r.urn: names[r.name] for r in resources}
    registered = _registered_edges(resources)
    assert registered, "the stack registers dependencies"
    for source, target, why in registered:
        assert (ids[source], ids[target]) in drawn, f"missing edge {source} -> {target}"
        assert not why or why in drawn[(ids[source], ids[target])]
    assert len(drawn) == len({(source, target) for source, target, _ in registered})


def test_critical_path_follows_dependencies_and_adds_up(prod_run):
    edges = dependency_edges(prod_run.resources)
    path = critical_path(prod_run.resources, edges)
    linked = {(edge.source, edge.target) for edge in edges}
    for before, after in itertools.pairwise(path):
        assert (before.resource.urn, after.resource.urn) in linked
    assert path[-1].finishes_at == sum(step.seconds for step in path)
    assert path[0].kind == "mk8s cluster"
    assert "GPU node group" in [step.kind for step in path]


def test_critical_path_takes_the_longest_chain():
    def resource(name: str, type_token: str, deps: list[str], platform: str = "") -> RegisteredResource:
        inputs = {"template": {"resources": {"platform": platform}}} if platform else {}
        return RegisteredResource(name, type_token, name, True, inputs, "", deps, {}, "", False)

    resources = [
        resource("cluster", "nebius:index/mk8sV1Cluster:Mk8sV1Cluster", []),
        resource("system", "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup", ["cluster"], "cpu-d3"),
        resource("driver", "kubernetes:helm.sh/v3:Release", ["system"]),
        resource("gpus", "nebius:index/mk8sV1NodeGroup:Mk8sV1NodeGroup", ["cluster"], "gpu-h200-sxm"),
        resource("pod", "kubernetes:core/v1:Pod", ["gpus", "driver"]),
    ]
    path = critical_path(resources, dependency_edges(resources))
    assert [step.resource.name for step in path] == ["cluster", "gpus", "pod"]
    expected = sum(DURATION_ESTIMATES[kind].seconds for kind in ("mk8s cluster", "GPU node group", "Pod"))
    assert path[-1].finishes_at == expected


@pytest.mark.parametrize("stack", STACKS)
def test_the_tree_lists_every_resource_with_its_parent_above_it(stack, stack_runs):
    resources = stack_runs[stack].resources
    lines = render_tree("stack", build_tree(resources, {}))
    headlines = {f"{kind_of(r.type)} {r.name}": r for r in resources}
    positions = {}
    for index, line in enumerate(lines):
        headline = re.sub(r"^[│├└─ ]+", "", line).removesuffix("  [protected]")
        if headline in headlines:
            positions[headlines[headline].urn] = (index, len(line) - len(line.lstrip("│├└─ ")))
    assert set(positions) == {r.urn for r in resources}
    for r in resources:
        if r.parent in positions:
            assert positions[r.parent][0] < positions[r.urn][0] and positions[r.parent][1] < positions[r.urn][1]


def test_key_settings_show_what_reviewers_check(tmp_path, capsys):
    assert plan.main(["--stack", "prod", "--out", str(tmp_path)]) == plan.EXIT_OK
    text = capsys.readouterr().out
    for setting in (
        "version=1.34",
        "etcd=3",
        "nodes=autoscaling 1..8",
        "nodes=fixed 4",
        "dra=true",
        "driversPreset=cuda13.0",
        "gpuCluster=${dra-prod-fabric-gpu-cluster.id}",
        "[protected]",
        "chart=",
        "requests=",
        "strategy=surge 0, unavailable 1, drain 30m",
        "strategy=surge 1, unavailable 0, drain 10m",
    ):
        assert setting in text


def test_a_mandatory_policy_violation_exits_non_zero_and_names_the_rule(tmp_path, capsys):
    # The program itself refuses versions below 1.34, so no stack file can trip this rule. The
    # pack's own config can: an organisation that requires 1.35 passes the same document that
    # `pulumi preview --policy-pack-config` takes, and the dev stack (1.34) must then be blocked.
    policy_config = tmp_path / "policy-config.json"
    policy_config.write_text(json.dumps({"mk8s-cluster-version": {"minimumVersion": "1.35"}}))
    assert plan.main(["--stack", "dev", "--out", "none"]) == plan.EXIT_OK
    capsys.readouterr()
    assert plan.main(["--stack", "dev", "--out", "none", "--policy-config", str(policy_config)]) == plan.EXIT_POLICY
    out = capsys.readouterr().out
    assert "BLOCKED" in out
    assert re.search(r"MANDATORY\s+mk8s-cluster-version", out)
    assert "below the required 1.35" in out


def test_a_config_the_program_refuses_exits_with_the_key_and_no_traceback(monkeypatch, stack_config, capsys):
    config = stack_config("dev")
    config["nebius-dra:kubernetesVersion"] = "1.33"
    monkeypatch.setattr(plan, "build_plan", lambda stack, **kwargs: build_plan(stack, config=config, **kwargs))
    assert plan.main(["--stack", "dev", "--out", "none"]) == plan.EXIT_PROGRAM
    captured = capsys.readouterr()
    assert "nebius-dra:kubernetesVersion" in captured.err and "Traceback" not in captured.err


def test_json_format_parses_and_lists_every_resource_and_edge(prod_run, tmp_path, capsys):
    plan.main(["--stack", "prod", "--format", "json", "--out", str(tmp_path)])
    document = json.loads(capsys.readouterr().out)

    def urns(nodes):
        return [urn for node in nodes for urn in [node["urn"], *urns(node["children"])]]

    assert sorted(urns(document["tree"])) == sorted(r.urn for r in prod_run.resources)
    assert len(document["edges"]) == len(dependency_edges(prod_run.resources))
    assert document["ok"] is True and document["criticalPath"]["totalSeconds"] > 0
    assert set(document["estimates"]) == set(DURATION_ESTIMATES)


def test_markdown_format_carries_a_mermaid_block(tmp_path, capsys):
    plan.main(["--stack", "dev", "--format", "markdown", "--out", "none"])
    out = capsys.readouterr().out
    assert "```mermaid\nflowchart TD\n" in out and out.startswith("## Offline plan: `dev`")


@pytest.mark.parametrize(
    ("type_token", "expected"),
    [
        ("kubernetes:core/v1:Namespace", ("v1", "Namespace")),
        ("kubernetes:apps/v1:Deployment", ("apps/v1", "Deployment")),
        ("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate", ("resource.k8s.io/v1", "ResourceClaimTemplate")),
    ],
)
def test_api_version_and_kind_come_from_the_type_token(type_token, expected):
    assert api_version_and_kind(type_token, {}) == expected
    assert is_kubernetes_object(type_token)


def test_helm_releases_and_providers_are_not_kubernetes_objects():
    assert not is_kubernetes_object("kubernetes:helm.sh/v3:Release")
    assert not is_kubernetes_object("pulumi:providers:kubernetes")
    assert (
        provider_urn("urn:pulumi:dev::p::pulumi:providers:kubernetes::k::k-id")
        == "urn:pulumi:dev::p::pulumi:providers:kubernetes::k"
    )


def test_presentable_hides_secrets_turns_whole_floats_into_integers_and_names_mock_ids():
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "value": "token"}
    shown = presentable({"kubeconfig": secret, "count": 4.0, "ratio": 0.5, "parentId": "c-id"}, {"c-id": "${c.id}"})
    assert shown == {"kubeconfig": SECRET_PLACEHOLDER, "count": 4, "ratio": 0.5, "parentId": "${c.id}"}
    assert isinstance(shown["count"], int)


def test_an_unusable_policy_config_is_reported_without_a_traceback(tmp_path, capsys):
    policy_config = tmp_path / "policy-config.json"
    policy_config.write_text(json.dumps({"mk8s-cluster-version": {"minimumVersion": "one"}}))
    assert plan.main(["--stack", "dev", "--out", "none", "--policy-config", str(policy_config)]) == plan.EXIT_PROGRAM
    assert "minimumVersion" in capsys.readouterr().err


def test_mermaid_labels_escape_what_mermaid_would_read_as_markup():
    name = 'a<b> "c" #1;'
    urn = f"urn:pulumi:dev::nebius-dra::kubernetes:core/v1:ConfigMap::{name}"
    odd = RegisteredResource(urn, "kubernetes:core/v1:ConfigMap", name, True, {}, "", [], {}, "", False)
    [_, node] = render_mermaid(build_tree([odd], {}), [])
    assert node == '  r_a_b___c___1_["ConfigMap<br/>a#lt;b#gt; #quot;c#quot; #35;1;"]'


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"workload-images-pinned": "warn"}, 'workload-images-pinned: enforcement level "warn" is not one of'),
        (
            {"mk8s-cluster-version": {"enforcementLevel": "strict"}},
            'mk8s-cluster-version: enforcement level "strict" is not one of',
        ),
        ({"all": 3}, "all: expected an enforcement level or an object of settings, got 3"),
        (["mandatory"], "expected an object of policy names, got a list"),
    ],
)
def test_a_policy_config_with_a_bad_level_or_shape_names_the_entry(tmp_path, capsys, document, expected):
    policy_config = tmp_path / "policy-config.json"
    policy_config.write_text(json.dumps(document))
    assert plan.main(["--stack", "dev", "--out", "none", "--policy-config", str(policy_config)]) == plan.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


CANARY = "x:CANARY1@h"


@pytest.mark.parametrize(
    "document",
    [
        {CANARY: "advisory"},
        {"all": CANARY + "\x1b[2J"},
        {"all": {CANARY: 1}},
        {"max-hourly-cost": [CANARY]},
        {"mk8s-cluster-version": {"minimumVersion": CANARY}},
    ],
)
def test_a_refused_policy_config_hides_a_credential_shaped_key_or_value(tmp_path, capsys, document):
    """By its shape where the plan reads the document; the pack's own refusal (a rule's config) by the pack's quoting
    (policies/dra_guardrails/quoting.py), which cannot import the project's."""
    policy_config = tmp_path / "policy-config.json"
    policy_config.write_text(json.dumps(document))
    assert plan.main(["--stack", "dev", "--out", "none", "--policy-config", str(policy_config)]) == plan.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert "CANARY1" not in err and "\x1b" not in err
    assert "hidden: may be a credential" in err or "[credentials]@h" in err


@pytest.fixture(scope="module")
def every_policy_disabled():
    # The one rule left on has its budget: a level on max-hourly-cost without one is refused (issue 37).
    budget = {"enforcementLevel": "advisory", "maxHourlyUsd": 1000}
    return build_plan("dev", out=None, policy_config={"all": "disabled", "max-hourly-cost": budget})


def test_a_policy_config_that_disables_policies_says_so_in_every_format(every_policy_disabled):
    from tools.plan.report import plan_document, render_markdown, render_text

    text, markdown = render_text(every_policy_disabled), render_markdown(every_policy_disabled)
    summary = text.splitlines()[0]
    assert "policies pass" not in summary and "disabled by --policy-config (all), 1 run" in summary
    assert "MANDATORY" in summary
    for rendered in (text, markdown):
        assert "mk8s-cluster-version (MANDATORY): by --policy-config all" in rendered
        assert "every rule passes" not in rendered.lower()
    disabled = plan_document(every_policy_disabled)["disabled"]
    assert {"policy": "mk8s-cluster-version", "mandatory": True, "by": "all"} in disabled
    assert "max-hourly-cost" not in {entry["policy"] for entry in disabled}


def test_a_policy_config_that_demotes_every_mandatory_rule_does_not_pass_the_gate(tmp_path, capsys):
    """`{"all": "advisory"}` ran every rule but let no finding block: the plan said "policies pass" and exited 0."""
    from tools.plan.report import plan_document, render_markdown, render_text

    policy_config = tmp_path / "policy-config.json"
    policy_config.write_text(json.dumps({"all": "advisory"}))
    status = plan.main(["--stack", "dev", "--out", "none", "--no-base", "--policy-config", str(policy_config)])
    assert status == plan.EXIT_POLICY
    summary = capsys.readouterr().out.splitlines()[0]
    assert "NOT GATED: no rule gates: --policy-config (all) demoted" in summary and "policies pass" not in summary
    assert "MANDATORY rule(s) demoted to advisory by --policy-config (all)" in summary, summary
    demoted = build_plan("dev", out=None, policy_config={"all": "advisory"})
    document = plan_document(demoted)
    assert document["ok"] is False and document["reason"].startswith("no rule gates"), document
    assert {"policy": "mk8s-cluster-version", "by": "all"} in document["demoted"]
    for rendered in (render_text(demoted), render_markdown(demoted)):
        assert (
            "demoted  mk8s-cluster-version (MANDATORY -" in rendered and "advisory): by --policy-config all" in rendered
        )


@pytest.mark.parametrize(
    "config",
    [
        {"all": "disabled", "max-hourly-cost": {"enforcementLevel": "mandatory", "maxHourlyUsd": 1000}},
        {"all": "disabled", "charts-mirrored": "remediate"},
        {"all": "advisory", "max-hourly-cost": {"enforcementLevel": "mandatory", "maxHourlyUsd": 1000}},
    ],
)
def test_a_rule_the_policy_config_promotes_does_not_stand_in_for_the_mandatory_gates(config):
    """Re-attack, 2026-12-03: every built-in gate off and one advisory rule (a budget without one) promoted read as
    gated, `"ok": true` and exit 0. A budget without its maxHourlyUsd is now refused outright (issue 37,
    tests/policies/test_policy_config.py); with one, it still gates only the cost."""
    from tools.plan.report import plan_document

    document = plan_document(build_plan("dev", out=None, policy_config=config))
    assert document["ok"] is False, document["reason"]


def test_a_policy_config_that_demotes_one_mandatory_rule_says_so_and_still_gates():
    from tools.plan.report import plan_document, render_text

    demoted = build_plan("dev", out=None, policy_config={"mk8s-cluster-version": "advisory"})
    summary = render_text(demoted).splitlines()[0]
    assert "policies: 1 MANDATORY rule(s) demoted to advisory by --policy-config (mk8s-cluster-version)" in summary
    document = plan_document(demoted)
    assert document["ok"] is True and document["demoted"] == [
        {"policy": "mk8s-cluster-version", "by": "mk8s-cluster-version"}
    ]
    assert plan_document(build_plan("dev", out=None))["demoted"] == []


def test_a_plan_in_which_no_policy_ran_does_not_pass_the_gate_in_any_format(tmp_path, capsys):
    """Hostile round: with `{"all": "disabled"}` the JSON plan said `"ok": true` and the plan exited 0, though no
    rule had checked anything."""
    from tools.plan.report import plan_document, render_markdown, render_text

    policy_config = tmp_path / "policy-config.json"
    policy_config.write_text(json.dumps({"all": "disabled"}))
    status = plan.main(["--stack", "dev", "--out", "none", "--no-base", "--policy-config", str(policy_config)])
    assert status == plan.EXIT_POLICY, "a gate that did not pass exits as a failed one does"
    summary = capsys.readouterr().out.splitlines()[0]
    assert "NOT GATED: no policy ran: --policy-config (all) disabled all" in summary and "policies pass" not in summary
    nothing_ran = build_plan("dev", out=None, policy_config={"all": "disabled"})
    document = plan_document(nothing_ran)
    assert document["ok"] is False and document["reason"].startswith("no policy ran: --policy-config (all)"), document
    for rendered in (render_text(nothing_ran), render_markdown(nothing_ran)):
        assert "NOT GATED: no policy ran" in rendered and "rule that ran passes" not in rendered.lower()
    assert plan_document(build_plan("dev", out=None))["reason"] is None
