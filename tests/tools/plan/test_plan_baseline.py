"""The baseline against the plan (tools/plan/baseline.py, changes.py, minor_upgrade.py, what_changed.py): a hostile
review's findings. An edited baseline is read strictly or refused; every recorded difference is shown, both values of
a field alike; a node group's minor never goes down."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from components.config.stack_file import load_stack_config
from components.redaction import redacted
from tests.helpers import with_gpu_groups_changed
from tools.plan import __main__ as plan_cli
from tools.plan.baseline import BaselineError, read_baseline
from tools.plan.model import build_plan
from tools.plan.report import plan_document, render_json, render_markdown, render_text


def _document(config: dict[str, str] | None = None) -> dict[str, Any]:
    return json.loads(json.dumps(plan_document(build_plan("dev", config=config, out=None))))


@pytest.fixture(scope="module")
def dev_baseline() -> dict[str, Any]:
    return _document()


def _edited(baseline: dict[str, Any], edit: Any) -> dict[str, Any]:
    edited = copy.deepcopy(baseline)
    edit(edited)
    return edited


def _labelled(value: str | None) -> dict[str, str]:
    return with_gpu_groups_changed("dev", lambda g: {"labels": {"password": value}} if value else {})


@pytest.mark.parametrize("before", ["hunter1", None])
def test_a_label_named_as_a_credential_is_hidden_on_both_sides_in_every_form(before):
    baseline = _document(_labelled(before))
    plan = build_plan("dev", config=_labelled("hunter2"), out=None, baseline=baseline)
    # What the CLI writes: text and markdown redacted as a whole, JSON leaf by leaf (render_json).
    forms = {"text": redacted(render_text(plan)), "markdown": redacted(render_markdown(plan))}
    changes = json.loads(render_json(plan))["changes"]
    forms["json"] = json.dumps(changes)
    for form, shown in forms.items():
        # (unset) as well: the redactor reads whatever follows `password: ` as its value.
        assert "template.metadata.labels.password: [redacted] -> [redacted]" in shown, form
        assert "hunter" not in shown, form


CREDENTIAL_KEYS = ("secret", "client-secret", "x-password-x", "passphrase", "credentials")


def test_a_label_whose_name_contains_a_credential_name_and_a_username_holding_a_password_are_hidden(dev_baseline):
    """a39 F6: `secret`, `client-secret`, `x-password-x`, `passphrase`, `credentials` were printed in clear, and so was
    a Helm value `username: bob:PW` (a password after the user-id's `:`)."""
    labels = {key: f"LEAKNEW{n}" for n, key in enumerate(CREDENTIAL_KEYS)}
    config = with_gpu_groups_changed("dev", lambda g: {"labels": labels})

    def older(baseline: dict[str, Any]) -> None:
        [gpu] = [g for g in baseline["nodeGroups"] if g["name"] == "dra-dev-h200"]
        template_labels = gpu["template"]["metadata"]["labels"]
        template_labels.update({key: f"LEAKOLD{n}" for n, key in enumerate(CREDENTIAL_KEYS)})
        baseline["releases"][0]["values"]["auth"] = {"username": "bob:LEAKPW", "user": "alice"}

    plan = build_plan("dev", config=config, out=None, baseline=_edited(dev_baseline, older))
    # The JSON's records (what a later baseline compares) keep the stack's labels as the stack file has them.
    forms = {"text": render_text(plan), "markdown": render_markdown(plan)}
    forms["json"] = json.dumps(json.loads(render_json(plan))["changes"])
    for form, shown in forms.items():
        assert "LEAK" not in shown, form
        assert "values.auth.username: [redacted] -> (unset)" in shown, form
        assert "values.auth.user: alice -> (unset)" in shown, form
        for key in CREDENTIAL_KEYS:
            assert f"labels.{key}: [redacted] -> [redacted]" in shown, (form, key)


def test_a_node_group_whose_minor_goes_down_is_refused_naming_it_both_versions_and_what_is_allowed(
    dev_baseline, tmp_path, capsys
):
    path = tmp_path / "newer.json"
    path.write_text(json.dumps(_edited(dev_baseline, lambda b: b["nodeGroups"][0].update(version="1.35"))))
    for form in ("text", "markdown", "json"):
        status = plan_cli.main(["--stack", "dev", "--baseline", str(path), "--out", "none", "--format", form])
        captured = capsys.readouterr()
        assert status == plan_cli.EXIT_PROGRAM, form
        assert captured.err.startswith(
            "python -m tools.plan: nebius-dra:kubernetesVersion: node group h200: version 1.35 -> 1.34 lowers its minor"
        )
        assert "allowed: 1.35 or a later minor" in captured.err
        if form == "json":
            assert json.loads(captured.out)["groupDowngrades"][0]["before"] == "1.35"
            continue
        assert captured.out == "", "a refusal prints only itself, on stderr"


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (
            lambda b: b["nodeGroups"][0].pop("protect"),
            'nodeGroups[0] ("dra-dev-h200") has no protect; tools.plan writes true or false',
        ),
        (lambda b: b["nodeGroups"][1].pop("version"), 'nodeGroups[1] ("dra-dev-system") has no version'),
        (lambda b: b.update(cluster=None), "cluster is null (a stack on an existing cluster) but nodeGroups lists 2"),
        (
            lambda b: b.update(driverRoot=None),
            "driverRoot is null; tools.plan writes the DRA driver's root, an absolute path",
        ),
        (
            lambda b: b["cluster"]["controlPlane"].update(version="1.x"),
            'cluster.controlPlane.version is "1.x"; tools.plan writes a version MAJOR.MINOR',
        ),
        # A version of over 4300 digits was read with int(): a traceback (attack2 A6); each number is bounded.
        (
            lambda b: b["cluster"]["controlPlane"].update(version="1." + "9" * 5000),
            'cluster.controlPlane.version is "1.99999',
        ),
        (
            lambda b: b["nodeGroups"][0].update(version="1." + "9" * 5000),
            'nodeGroups[0].version is "1.99999',
        ),
        (
            lambda b: b["nodeGroups"][1].update(version="1.34-nebius-node." + "9" * 5000),
            "(5019 characters); tools.plan writes a version MAJOR.MINOR or MAJOR.MINOR-nebius-node.N, each number of "
            "at most 6 digits",
        ),
        (
            lambda b: [r.update(version="25." + "9" * 5000 + ".0") for r in b["releases"]],
            "(5007 characters), which is not one tools.plan writes: a chart version's numbers have at most 6 digits",
        ),
        # A minor the stack does not take was compared as the cluster's (attack2 A7): "Allowed path: 1.0 -> 1.1 ...".
        *(
            (
                lambda b, v=version: b["cluster"]["controlPlane"].update(version=v),
                f'cluster.controlPlane.version is "{version}", of minor "{version}", which is not one tools.plan '
                "writes: the stack's kubernetesVersion takes the minors 1.34, 1.35, 1.36 only",
            )
            for version in ("0.34", "1.0", "1.99")
        ),
        (
            lambda b: b["nodeGroups"][0].update(version="1.99-nebius-node.2"),
            'nodeGroups[0].version is "1.99-nebius-node.2", of minor "1.99", which is not one tools.plan writes',
        ),
        # The stack refuses a repository URL with a login or a query: no plan records one (attack2 A8).
        *(
            (
                lambda b, r=repo: b["releases"][0].update(repositoryOpts={"repo": r, "login": "none"}),
                'releases[0].repositoryOpts.repo is "<',
            )
            for repo in (
                "https://u:CANARYPW@helm.example.com/nvidia",
                "https://helm.example.com/x?token=CANARYPW",
                # Re-attack, 2026-12-03: token-shaped path segments, as the stack refuses them.
                "https://dl.cloudsmith.io/CANARYaBcDeFgH12/org/repo/helm/charts/",
                "https://helm.example.com/k=CANARY10",
            )
        ),
        (
            lambda b: b.update(error=False),
            "error is false; tools.plan writes null, or the message of a plan that failed",
        ),
        (lambda b: b.update(error=""), 'error is ""; tools.plan writes null, or the message of a plan that failed'),
        (
            lambda b: b["nodeGroups"][0].update(protect="no"),
            'nodeGroups[0].protect is "no"; tools.plan writes true or false',
        ),
        (lambda b: b["releases"][0].update(extra=1), "releases[0].extra is a field tools.plan does not write there"),
        # Another project's stack of the same name: its records were planned as deletions (a39 hostile F11).
        (
            lambda b: b["nodeGroups"][0].update(urn=b["nodeGroups"][0]["urn"].replace("::nebius-dra::", "::other::")),
            "not a URN of this stack (urn:pulumi:dev::nebius-dra::...)",
        ),
        # Once "tools.plan writes  there", the allowed part empty (a39 hostile F9).
        (lambda b: b.pop("releases"), "the baseline has no releases; tools.plan writes a list of the Helm releases'"),
        (lambda b: b.pop("claimTemplates"), "has no claimTemplates; tools.plan writes a list of the claim templates'"),
        # Out of the stack's own bounds (components/input/node_groups.py, Duration), which docs/offline-plan.md says
        # is refused: it was compared as a drain timeout.
        (
            lambda b: b["nodeGroups"][0]["strategy"].update(drainTimeout="99999999999h"),
            'nodeGroups[0].strategy.drainTimeout is "99999999999h"; tools.plan writes a duration such as 30m, 1h30m',
        ),
        (
            lambda b: b["nodeGroups"][0]["strategy"].update(maxSurge={"count": 1, "percent": 5}),
            "nodeGroups[0].strategy.maxSurge holds count and percent, or neither",
        ),
        (
            lambda b: b["nodeGroups"][0]["strategy"]["maxUnavailable"].update(count=10**6),
            "nodeGroups[0].strategy.maxUnavailable.count is 1000000; tools.plan writes a whole number from 0 to",
        ),
        (
            lambda b: b["nodeGroups"][0].update(autoRepair={"conditions": [{"type": "Ready", "status": "maybe"}]}),
            'nodeGroups[0].autoRepair.conditions[0].status is "maybe"; tools.plan writes TRUE, FALSE or UNKNOWN there',
        ),
        # A field no plan writes was ignored silently, at the top level and in a record's object.
        (
            lambda b: b.update(nodeGroup=[]),
            "nodeGroup is a field tools.plan does not write there; it writes baselineFrom, changes, claimTemplates,",
        ),
        (
            lambda b: b["nodeGroups"][0].update(autoscaling={"minNodeCount": 1, "maxNodeCount": 2, "initial": 1}),
            "nodeGroups[0].autoscaling.initial is a field tools.plan does not write there; it writes maxNodeCount, "
            "minNodeCount",
        ),
        (
            lambda b: b["nodeGroups"][0]["strategy"].update(drain="1h"),
            "nodeGroups[0].strategy.drain is a field tools.plan does not write there; it writes drainTimeout, maxSurge,",
        ),
        # Issue 37, hostile input: every field of the registered inputs typed and bounded as the stack's own setting
        # (components/input/), its booleans JSON booleans, no key the program does not write. Each was accepted: a
        # dra of 1e308 was compared as a change that RECREATES NODES.
        *(
            (
                lambda b, v=value: b["cluster"]["controlPlane"].update(etcdClusterSize=v),
                f"cluster.controlPlane.etcdClusterSize is {shown}; tools.plan writes 1 or 3",
            )
            for value, shown in ((1e308, "1e+308"), ("3", '"3"'), (True, "true"), (2, "2"))
        ),
        (
            lambda b: b["cluster"]["controlPlane"].update(subnetId=7),
            "cluster.controlPlane.subnetId is 7; tools.plan writes the ID of a VPC subnet",
        ),
        (
            lambda b: b["cluster"]["controlPlane"].update(etcd=3),
            "cluster.controlPlane.etcd is a field tools.plan does not write there; it writes endpoints, etcdClusterSize",
        ),
        *(
            (
                lambda b, v=value: b["nodeGroups"][0]["template"]["gpuSettings"].update(dra=v),
                f"nodeGroups[0].template.gpuSettings.dra is {shown}; tools.plan writes true or false there",
            )
            for value, shown in ((1e308, "1e+308"), ("true", '"true"'), (1, "1"), (None, "null"))
        ),
        (
            lambda b: b["nodeGroups"][0]["template"]["gpuSettings"].update(drivers="cuda13.0"),
            "nodeGroups[0].template.gpuSettings.drivers is a field tools.plan does not write there; it writes dra,",
        ),
        *(
            (
                lambda b, v=value: b["nodeGroups"][0]["template"]["bootDisk"].update(sizeGibibytes=v),
                f"nodeGroups[0].template.bootDisk.sizeGibibytes is {shown}; tools.plan writes a whole number from 64 "
                "to 65536",
            )
            for value, shown in ((10**30, "1" + "0" * 30), ("200", '"200"'), (200.5, "200.5"), (8, "8"))
        ),
        (
            lambda b: b["nodeGroups"][0]["template"]["bootDisk"].update(type="HDD"),
            "nodeGroups[0].template.bootDisk.type is \"HDD\"; tools.plan writes 'NETWORK_SSD' there",
        ),
        (
            lambda b: b["nodeGroups"][1]["template"]["resources"].update(preset="4vcpu-16gb "),
            'nodeGroups[1].template.resources.preset is "4vcpu-16gb "; tools.plan writes a preset',
        ),
        (
            lambda b: b["nodeGroups"][0]["template"].update(extra={}),
            "nodeGroups[0].template.extra is a field tools.plan does not write there; it writes bootDisk,",
        ),
        (
            lambda b: b["nodeGroups"][0]["template"].update(metadata={"labels": None}),
            "nodeGroups[0].template.metadata.labels is null; tools.plan writes",
        ),
        # A label key the stack refuses, told by its shape (the refusal never quotes the canary).
        (
            lambda b: b["nodeGroups"][0]["template"]["metadata"]["labels"].update({"u:CANARY1@h": "v"}),
            'nodeGroups[0].template.metadata.labels["<11 characters: letters, digits, :@; hidden: may be a credential>"]',
        ),
        (
            lambda b: b["nodeGroups"][0]["template"].update(
                taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]
            ),
            'nodeGroups[0].template.taints[0].effect is "NoSchedule"; tools.plan writes NO_SCHEDULE, PREFER_NO_SCHEDULE',
        ),
        *(
            (
                lambda b, v=value: b["claimTemplates"][0]["spec"]["spec"]["devices"]["requests"][0]["exactly"].update(
                    count=v
                ),
                f"claimTemplates[0].spec.spec.devices.requests[0].exactly.count is {shown}; tools.plan writes a whole "
                "number from 1 to 32",
            )
            for value, shown in ((10**30, "1" + "0" * 30), (True, "true"), (1.5, "1.5"), ("1", '"1"'))
        ),
        (
            lambda b: b["claimTemplates"][0]["spec"]["spec"].update(device={}),
            "claimTemplates[0].spec.spec.device is a field tools.plan does not write there; it writes devices",
        ),
    ],
)
def test_a_baseline_record_of_another_shape_or_missing_a_field_is_refused_naming_the_file_and_the_path(
    edit, named, dev_baseline, tmp_path, capsys
):
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(_edited(dev_baseline, edit)))
    assert plan_cli.main(["--stack", "dev", "--out", "none", "--baseline", str(path)]) == plan_cli.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert (
        err.startswith(
            f"python -m tools.plan: {json.dumps(str(path))}: the baseline is not the JSON of an offline plan"
        )
        and named in err
    ), err
    assert "CANARY" not in err and "Traceback" not in err


def test_a_login_field_holding_a_login_is_refused_without_quoting_it(dev_baseline, tmp_path, capsys):
    """`repositoryOpts.login` records only whether a login is set; a hand-edited one may hold the login (a39h F7)."""
    path = tmp_path / "login.json"
    edited = _edited(
        dev_baseline,
        lambda b: b["releases"][0].update(repositoryOpts={"repo": "https://x.example.com", "login": "u:CANARY7F7"}),
    )
    path.write_text(json.dumps(edited))
    assert plan_cli.main(["--stack", "dev", "--out", "none", "--baseline", str(path)]) == plan_cli.EXIT_PROGRAM
    err = capsys.readouterr().err
    assert "releases[0].repositoryOpts.login is a value it may not hold (not shown" in err, err
    assert "CANARY7F7" not in err


def test_a_stack_on_an_existing_cluster_records_no_cluster_and_is_read(dev_baseline):
    existing = _edited(dev_baseline, lambda b: b.update(cluster=None, nodeGroups=[]))
    plan = build_plan("dev", out=None, baseline=existing)
    assert plan.changes is not None and len(plan.changes.added_groups) == 2


def test_a_move_of_the_driver_root_alone_is_shown_with_its_row(dev_baseline):
    moved = _edited(dev_baseline, lambda b: b.update(driverRoot="/run/nvidia/driver"))
    plan = build_plan("dev", out=None, baseline=moved)
    for shown in (render_text(plan), render_markdown(plan)):
        assert "Nothing recorded differs" not in shown
        assert "DRA DRIVER ROOT /run/nvidia/driver -> / (draDriverRoot): Helm upgrades the release" in shown
        assert "restarts the plugin on every GPU node at once" in shown
    assert plan_document(plan)["changes"]["driverRoot"] == ["/run/nvidia/driver", "/"]


def test_an_unchanged_dev_plan_reads_its_own_baseline(dev_baseline):
    assert "Nothing recorded differs" in render_text(
        build_plan("dev", config=load_stack_config("dev"), out=None, baseline=dev_baseline)
    )


def test_values_that_look_alike_are_told_apart_and_a_null_is_nulls_word(dev_baseline, tmp_path, capsys):
    """A blank at a value's end is shown (quoted), and JSON's null is `null`, never Python's `None` (a39 hostile F13).
    A release's values are the chart's, any text and any null: a node group's template takes neither (issue 37)."""

    def exporter(baseline: dict[str, Any]) -> dict[str, Any]:
        return next(r["values"] for r in baseline["releases"] if "kubeletPath" in r["values"])

    def edit(baseline: dict[str, Any]) -> None:
        exporter(baseline)["kubeletPath"] += " "
        exporter(baseline)["serviceMonitor"] = None

    path = tmp_path / "alike.json"
    path.write_text(json.dumps(_edited(dev_baseline, edit)))
    plan_cli.main(["--stack", "dev", "--out", "none", "--baseline", str(path)])
    out = capsys.readouterr().out
    kubelet_path = exporter(dev_baseline)["kubeletPath"]
    assert f'values.kubeletPath: "{kubelet_path} " -> {kubelet_path}' in out, out
    assert "None" not in out and "values.serviceMonitor: null ->" in out, out


def test_a_deleted_group_carrying_a_staying_groups_label_is_named_by_its_own_name(dev_baseline, tmp_path, capsys):
    """A hand-edited baseline's extra group with h200's labels: the line names the group that goes, never h200,
    which stays (a39 hostile F16)."""

    def edit(baseline: dict[str, Any]) -> None:
        extra = copy.deepcopy(baseline["nodeGroups"][0])
        extra["urn"] = extra["urn"].replace("gpu-h200-nodes", "gpu-x9-nodes")
        extra["name"] = "dra-dev-x9"
        baseline["nodeGroups"].append(extra)

    path = tmp_path / "extra.json"
    path.write_text(json.dumps(_edited(dev_baseline, edit)))
    plan_cli.main(["--stack", "dev", "--out", "none", "--baseline", str(path)])
    out = capsys.readouterr().out
    assert "DELETES node group dra-dev-x9" in out and "DELETES node group h200" not in out, out


@pytest.mark.parametrize(
    "document",
    [
        {"stack": "x:CANARY1@h\x1b[2J", "nodeGroups": []},
        {"stack": "dev", "error": "failed at x:CANARY1@h\x1b[2J", "nodeGroups": []},
        {"stack": "dev", "nodeGroups": [], "planFormat": "x:CANARY1@h"},
    ],
)
def test_a_baseline_field_is_quoted_through_shown_never_raw(document):
    """Issue 37: a baseline's stack, error and planFormat were quoted raw; a credential-shaped one by its shape."""
    with pytest.raises(BaselineError) as refused:
        read_baseline(document, "dev")
    assert "CANARY1" not in str(refused.value) and "\x1b" not in str(refused.value)
    assert "hidden: may be a credential" in str(refused.value)


def test_the_fields_a_baseline_may_hold_are_those_a_json_plan_writes(dev_baseline):
    """An unknown top-level field is refused (READER_FIELDS and the records): the list is the writer's own."""
    from tools.plan.baseline import READER_FIELDS, Format2Document

    assert set(dev_baseline) == set(READER_FIELDS) | set(Format2Document.model_fields)
    assert read_baseline(dev_baseline, "dev").groups


TOKEN = "ghp_CANARYabcdefghijklmnopqrstuvwxyz0123"


def _hostile(baseline: dict[str, Any]) -> None:
    """Every text of a baseline that reaches the change list, each a credential-shaped canary."""
    group = baseline["nodeGroups"][0]
    # A label or taint the stack refuses (`u:CANARY1@h`) is refused in a baseline too (HOSTILE_TEMPLATES below).
    gone = copy.deepcopy(baseline["nodeGroups"][1])
    gone.update(urn=gone["urn"] + "-gone", name="dra-dev-u:CANARY7@h", protect=True)
    baseline["nodeGroups"].append(gone)
    release = baseline["releases"][0]
    release["values"]["image"] = {"repository": "i:CANARY8@h/x", "tag": "t=CANARY9"}
    # A repository URL the stack refuses is refused in a baseline too (the refusal cases above): this one is plain.
    release["repositoryOpts"] = {"repo": "https://h.example.com/charts", "login": "none"}
    # A token's form, bare and among words (the redactor does not know `ghp_` in prose).
    group["template"]["metadata"]["labels"]["tok"] = TOKEN
    release["values"]["script"] = f"echo {TOKEN} > /dev/null"
    removed = copy.deepcopy(release)
    removed.update(urn=removed["urn"] + "-gone", name="r:CANARY11@h", chart="c:CANARY12@h", version="v:CANARY13@h")
    baseline["releases"].append(removed)
    template = copy.deepcopy(baseline["claimTemplates"][0])
    template.update(urn=template["urn"] + "-gone", name="n:CANARY14@h", namespace="s:CANARY15@h")
    baseline["claimTemplates"].append(template)
    kube = copy.deepcopy(baseline["objects"][0])
    kube.update(urn=kube["urn"] + "-gone", type="kubernetes:core/v1:q:CANARY16@h", name="o=CANARY17")
    baseline["objects"].append(kube)
    baseline["driverRoot"] = "/d:CANARY18@h"


def test_every_baseline_text_in_the_change_list_is_quoted_as_shown_quotes_it(dev_baseline, tmp_path, capsys):
    """Issue 37: a baseline's group name `dra-dev-u:CANARY@h`, object kind, release, claim
    template, image, chart repository and driver root reached the change list as they were (or redacted past
    recognition, `[credentials]@h` for a whole path): each is told by its shape, the path around it kept."""
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(_edited(dev_baseline, _hostile)))
    for form in ("text", "markdown", "json"):
        plan_cli.main(["--stack", "dev", "--out", "none", "--format", form, "--baseline", str(path)])
        out = capsys.readouterr().out
        assert "CANARY" not in out, (form, [line for line in out.splitlines() if "CANARY" in line])
        assert "hidden: may be a credential" in out, form
    plan = build_plan("dev", out=None, baseline=_edited(dev_baseline, _hostile))
    text = render_text(plan)
    assert '`pulumi up` FAILS deleting node group "<19 characters: letters, digits, -:@; hidden' in text
    assert 'DRA DRIVER ROOT "<13 characters: letters, digits, /:@; hidden: may be a credential>" -> /' in text
