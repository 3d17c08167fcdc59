"""A policy config entry that would do nothing is an error, not a gate that silently stays open.

`--policy-config` (the plan) and `--policy-pack-config` (the Pulumi CLI) take the same document:
policy name, or `all`, to a level or to settings. A misspelt policy name or setting used to be
ignored, so `{"mk8s-cluster-versoin": {"minimumVersion": "1.35"}}` let a 1.34 cluster through.
The plan refuses such a document before it runs the program (exit 2, the entry named on stderr);
the pack's rules refuse an unknown setting when the CLI hands it to them.
"""

from __future__ import annotations

import json

import pytest
from pulumi_policy import PolicyCustomTimeouts, PolicyResourceOptions, ResourceValidationArgs

from policies.dra_guardrails import (
    POLICIES,
    RULES,
    PlannedResource,
    PolicyConfigError,
    check_resources,
    validate_policy_config,
)
from policies.dra_guardrails.planned import CLUSTER_TYPE
from tools.plan import __main__ as plan

CLUSTER = PlannedResource(
    "urn:pulumi:t::p::" + CLUSTER_TYPE + "::c", CLUSTER_TYPE, "c", {"controlPlane": {"version": "1.34"}}
)
OPTIONS = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)

REFUSED = [
    pytest.param(
        {"mk8s-cluster-versoin": {"minimumVersion": "1.35"}},
        [
            'unknown policy "mk8s-cluster-versoin" (given an object)',
            'did you mean "mk8s-cluster-version"?',
            "the pack's policies are charts-mirrored, ci-identity-roles, ci-identity-trust,",
            "or all for every policy",
        ],
        id="unknown-policy",
    ),
    pytest.param(
        {"workload-images-pined": "mandatory"},
        [
            'unknown policy "workload-images-pined" (given a string of 9 characters)',
            'did you mean "workload-images-pinned"?',
        ],
        id="unknown-policy-given-a-level",
    ),
    pytest.param(
        {"mk8s-cluster-version": {"minimumVersoin": "1.35"}},
        [
            'mk8s-cluster-version: unknown setting "minimumVersoin" (given a string of 4 characters)',
            'did you mean "minimumVersion"?',
            "its settings are enforcementLevel, minimumVersion",
        ],
        id="unknown-setting-of-a-policy-with-settings",
    ),
    pytest.param(
        {"workload-images-pinned": {"enforcementLevel": "mandatory", "allowLatest": True}},
        [
            'workload-images-pinned: unknown setting "allowLatest" (given a boolean)',
            "it takes no settings, only enforcementLevel",
        ],
        id="setting-of-a-policy-without-settings",
    ),
    pytest.param(
        {"all": {"enforcementLevel": "mandatory", "minimumVersion": "1.35"}},
        ['all: unknown setting "minimumVersion" (given a string of 4 characters)', '"all" takes only enforcementLevel'],
        id="setting-under-all",
    ),
    # Issue 37: a level set on a rule that checks nothing without a setting, the setting left out.
    pytest.param(
        {"max-hourly-cost": "mandatory"},
        [
            'max-hourly-cost: enforcementLevel "mandatory" is set without maxHourlyUsd, and without maxHourlyUsd the '
            "policy checks nothing, so it would gate nothing; set maxHourlyUsd in this entry"
        ],
        id="gate-without-its-budget",
    ),
    pytest.param(
        {"max-hourly-cost": {"enforcementLevel": "mandatory"}, "all": "advisory"},
        ['max-hourly-cost: enforcementLevel "mandatory" is set without maxHourlyUsd'],
        id="gate-without-its-budget-as-an-object",
    ),
    pytest.param(
        {"max-hourly-cost": {"enforcementLevel": "advisory"}},
        ['max-hourly-cost: enforcementLevel "advisory" is set without maxHourlyUsd', "so it would report nothing"],
        id="advisory-without-its-budget",
    ),
]


@pytest.mark.parametrize(("document", "expected"), REFUSED)
def test_the_plan_refuses_an_entry_that_would_do_nothing(tmp_path, capsys, program_runs, document, expected):
    policy_config = tmp_path / "policy-config.json"
    policy_config.write_text(json.dumps(document))
    status = plan.main(["--stack", "dev", "--out", "none", "--policy-config", str(policy_config)])
    captured = capsys.readouterr()
    assert status == plan.EXIT_PROGRAM
    assert captured.err.startswith("python -m tools.plan: invalid policy config: ")
    for text in expected:
        assert text in captured.err
    assert "Traceback" not in captured.err and captured.out == ""
    assert program_runs == [], "the program ran before the policy config was checked"


@pytest.mark.parametrize(("document", "expected"), REFUSED)
def test_check_resources_refuses_an_entry_that_would_do_nothing(document, expected):
    with pytest.raises(PolicyConfigError) as refused:
        check_resources([CLUSTER], document)
    for text in expected:
        assert text in str(refused.value)


def test_a_rule_refuses_an_unknown_setting_handed_to_it_as_the_cli_does():
    # The CLI checks settings against each policy's config schema, but the schema reaches it as
    # `properties` (and `required`) only, so an extra key passes; the rule itself must refuse it.
    [version] = [policy for policy in POLICIES if policy.name == "mk8s-cluster-version"]
    args = ResourceValidationArgs(
        CLUSTER_TYPE, CLUSTER.props, CLUSTER.urn, "c", OPTIONS, None, {"minimumVersion": "1.34", "minVersion": "1.35"}
    )
    with pytest.raises(PolicyConfigError, match='mk8s-cluster-version: unknown setting "minVersion"'):
        version.validate(args, lambda message, urn=None: None)


@pytest.mark.parametrize(
    "document",
    [
        {
            "mk8s-cluster-version": {"minimumVersion": "1.35"},
            "workload-images-pinned": "mandatory",
            "network-device-requested-once": {"enforcementLevel": "disabled"},
        },
        {"all": "advisory"},
        {"all": {"enforcementLevel": "disabled"}},
        {rule.name: {"enforcementLevel": "advisory", **({rule.needs: 100} if rule.needs else {})} for rule in RULES},
        # A rule that checks nothing without a setting may still be turned off, or take the level `all` sets.
        {"max-hourly-cost": "disabled"},
        {"all": "mandatory"},
        {},
        None,
    ],
)
def test_every_documented_form_is_still_accepted(document):
    validate_policy_config(document)


def test_every_schema_setting_is_accepted():
    for rule in RULES:
        rule.check_settings({name: None for name in rule.setting_names()})


@pytest.mark.parametrize("key", ["token", "password", "client_secret", "apiKey"])
def test_an_unknown_setting_named_like_a_credential_never_shows_its_value(key):
    """Hostile round five: an unknown setting's value was quoted, and its name is the user's."""
    for document in ({"mk8s-cluster-version": {key: "CANARY5582"}}, {"all": {key: 5582}}, {key: "CANARY5582"}):
        with pytest.raises(PolicyConfigError) as refused:
            validate_policy_config(document)
        assert "5582" not in str(refused.value), refused.value


def _documented_config() -> dict:
    """The sample config of policy-pack.md's "Configuring" paragraph, as a reader pastes it."""
    from components.config.stack_file import PROJECT_DIR

    page = (PROJECT_DIR / "docs" / "policy-pack.md").read_text().split("**Configuring.**", 1)[1]
    return json.loads(page.split("```json\n", 1)[1].split("```", 1)[0])


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_documented_config_passes_the_shipped_stacks(stack):
    """Newcomer 4: the sample blocked dev and prod (a minimumVersion of 1.35 on two 1.34 stacks). It is checked as the
    plan checks a --policy-config, and plans the committed stacks without a mandatory finding."""
    from tools.plan.model import build_plan

    document = _documented_config()
    validate_policy_config(document)
    built = build_plan(stack, out=None, policy_config=document)
    assert built.error is None and not built.refusals and not built.blocked, [f.message for f in built.findings]
    assert any(policy == "max-hourly-cost" for policy, _ in built.passes), "the sample's budget checks something"


def test_remediate_gates_as_mandatory_since_no_rule_remediates():
    """policy-pack.md: the engine reports a violation still found at `remediate` as mandatory, and no rule of the
    pack has a remediation, so the plan blocks on it as `pulumi up` would."""
    from tools.plan.model import build_plan

    assert not any(policy.has_remediation() for policy in POLICIES if hasattr(policy, "has_remediation"))
    advisory = build_plan("dev", out=None)
    assert any(f.policy == "gpu-drivers-preset-known" and not f.mandatory for f in advisory.findings)
    remediate = build_plan("dev", out=None, policy_config={"gpu-drivers-preset-known": "remediate"})
    assert remediate.blocked
    assert [f.mandatory for f in remediate.findings if f.policy == "gpu-drivers-preset-known"] == [True]


def test_every_independent_problem_of_a_config_is_named_in_one_run(capsys, tmp_path):
    """Newcomer 4: a misspelt policy name hid the setting under `all` until the next run. As the stack config's
    check does, one refusal names every problem: each entry, and each setting and the level of one entry."""
    document = {
        "max-hourly-cots": {"maxHourlyUsd": 3},
        "all": {"maxHourlyUsd": 3},
        "mk8s-cluster-version": {"enforcementLevel": "Mandatory", "minVersion": "1.35", "x": 1},
    }
    expected = [
        'unknown policy "max-hourly-cots"',
        'all: unknown setting "maxHourlyUsd"',
        'mk8s-cluster-version: enforcement level "Mandatory" is not one of',
        'mk8s-cluster-version: unknown setting "minVersion"',
        'mk8s-cluster-version: unknown setting "x"',
    ]
    with pytest.raises(PolicyConfigError) as refused:
        validate_policy_config(document)
    lines = str(refused.value).splitlines()
    assert lines[0] == f"{len(expected)} problems:", lines
    assert [line.startswith(f"  - {start}") for line, start in zip(lines[1:], expected)] == [True] * len(expected)
    config = tmp_path / "policy.json"
    config.write_text(json.dumps(document))
    assert plan.main(["--stack", "dev", "--out", "none", "--no-base", "--policy-config", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"python -m tools.plan: invalid policy config: {len(expected)} problems:\n"), err
    assert all(start in err for start in expected), err


def test_a_rule_that_checks_nothing_without_a_setting_names_one_it_reads_without_a_default():
    """`needs` is what the runner refuses a level without; a default would stand in for it, and then it is not needed."""
    needing = {rule.name: rule.needs for rule in RULES if rule.needs is not None}
    assert needing == {"max-hourly-cost": "maxHourlyUsd"}
    for rule in RULES:
        if rule.needs is not None:
            assert rule.config_schema is not None and rule.needs in rule.setting_names()
            assert "default" not in rule.config_schema.properties[rule.needs]


def test_a_budget_given_as_null_is_refused_not_read_as_no_budget():
    with pytest.raises(PolicyConfigError, match="maxHourlyUsd must be a number of US dollars per hour"):
        check_resources([CLUSTER], {"max-hourly-cost": {"enforcementLevel": "mandatory", "maxHourlyUsd": None}})
