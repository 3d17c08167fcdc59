"""The offline runner: every rule over a list of planned resources, through the SDK's own validate entry points.

`check_resources` is what the offline plan and the tests call; `validate_policy_config` refuses a
`--policy-pack-config` document with an entry that would do nothing, as the CLI itself would not."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from .cost_rules import max_hourly_cost_pass
from .framework import (
    ALL_POLICIES,
    LEVEL_KEY,
    PolicyConfigError,
    ResourceRule,
    StackRule,
    did_you_mean,
    json_kind,
    problems_text,
)
from .planned import NotANumberError, PlannedResource, as_json
from .quoting import shown
from .registry import POLICIES, RULES


@dataclass(frozen=True)
class Finding:
    """One violation; `urn` is None when the stack as a whole is at fault."""

    policy: str
    mandatory: bool
    urn: str | None
    message: str


_LEVELS = {level.value: level for level in EnforcementLevel}
_NO_OPTIONS = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [])


def sdk_props(props: Mapping[str, Any]) -> Mapping[str, Any]:
    """Properties as the policy SDK hands them to a rule: secrets unwrapped, unknowns guarded."""
    return unknown_checking_proxy(deserialize_properties(dict(props)))


def _level(name: str, text: Any) -> EnforcementLevel:
    if not isinstance(text, str) or text not in _LEVELS:
        raise PolicyConfigError(f"{name}: enforcement level {shown(as_json(text))} is not one of {', '.join(_LEVELS)}")
    return _LEVELS[text]


def _config_entry(name: str, entry: Any) -> tuple[EnforcementLevel | None, dict]:
    """One entry of a `--policy-pack-config` document: a level, or settings with an optional `enforcementLevel`."""
    if isinstance(entry, str):
        return _level(name, entry), {}
    if not isinstance(entry, Mapping):
        raise PolicyConfigError(
            f"{name}: expected an enforcement level or an object of settings, got {shown(as_json(entry))}"
        )
    properties = dict(entry)
    if LEVEL_KEY not in properties:
        return None, properties
    # Present is used: false, "" or null is refused like any other wrong level, never read as "not set".
    return _level(name, properties.pop(LEVEL_KEY)), properties


def _level_and_properties(
    name: str, default: EnforcementLevel, config: Mapping[str, Any]
) -> tuple[EnforcementLevel, dict]:
    """The policy's own entry wins over `all`, which wins over the policy's built-in level."""
    pack_level, _ = _config_entry(ALL_POLICIES, config.get(ALL_POLICIES, {}))
    level, properties = _config_entry(name, config.get(name, {}))
    return level or pack_level or default, properties


def validate_policy_config(config: Any) -> None:
    """PolicyConfigError unless every entry of a `--policy-pack-config` document would take effect.

    Refused: a policy name the pack does not have (the Pulumi CLI keeps such an entry without a
    word), a setting the policy does not read, settings under `all` (which sets only a level),
    an entry that is neither a level nor an object, and a level other than `disabled` set on a
    rule's own entry without the setting the rule checks nothing without (`needs`: `mandatory`
    on max-hourly-cost without maxHourlyUsd gates nothing). `all` may still set such a rule's
    level: it sets every rule's, and means something for the others. Settings' values are checked
    by the rules.
    """
    if config is None:
        return
    if not isinstance(config, Mapping):
        raise PolicyConfigError(f"expected an object of policy names, got a {type(config).__name__}")
    rules = {rule.name: rule for rule in RULES}
    problems = []
    for name, entry in config.items():
        if name != ALL_POLICIES and name not in rules:
            problems.append(
                f'unknown policy "{shown(str(name))}" (given {json_kind(entry)}){did_you_mean(str(name), sorted(rules))}; '
                f"the pack's policies are {', '.join(sorted(rules))}, or {ALL_POLICIES} for every policy"
            )
            continue
        level = None
        try:
            level, properties = _config_entry(name, entry)
        except PolicyConfigError as wrong:
            # A wrong level beside settings: the settings are still judged, each mistake of the entry named at once.
            problems.append(str(wrong))
            properties = {k: v for k, v in entry.items() if k != LEVEL_KEY} if isinstance(entry, Mapping) else {}
        if name in rules:
            problems += rules[name].unknown_settings(properties)
            problems += _needed_setting(rules[name], level, properties)
        else:
            problems += [
                f'{ALL_POLICIES}: unknown setting "{key}" (given {json_kind(value)}); "{ALL_POLICIES}" '
                f"takes only {LEVEL_KEY}, settings go under the policy that reads them"
                for key, value in properties.items()
            ]
    if problems:
        raise PolicyConfigError(problems_text(problems))


def _needed_setting(rule: ResourceRule | StackRule, level: EnforcementLevel | None, properties: Mapping) -> list[str]:
    """The problem of a level set on `rule` without the setting it checks nothing without, if it is one."""
    if rule.needs is None or level in (None, EnforcementLevel.DISABLED) or rule.needs in properties:
        return []
    return [
        f'{rule.name}: enforcementLevel "{level.value}" is set without {rule.needs}, and without {rule.needs} the policy '
        f"checks nothing, so it would {'gate' if level in _GATING else 'report'} nothing; set {rule.needs} in this "
        f'entry, or leave the entry out (or set it to "{EnforcementLevel.DISABLED.value}")'
    ]


@dataclass(frozen=True)
class DisabledPolicy:
    """A rule that `--policy-pack-config` turns off: `by` is the entry that does (the rule's own name, or `all`), and
    `mandatory` its built-in level, so a plan can say that a mandatory rule did not run."""

    policy: str
    mandatory: bool
    by: str


def disabled_policies(config: Mapping[str, Any] | None) -> list[DisabledPolicy]:
    """The rules `config` disables, each with the entry that disables it: the CLI's `all` sets the level of every
    policy, a policy's own entry wins over it (https://www.pulumi.com/docs/iac/using-pulumi/crossguard/configuration/,
    "Enforcement Level"), as `_level_and_properties` resolves it for `check_resources`."""
    validate_policy_config(config)
    disabled = []
    for rule in RULES:
        level, _ = _level_and_properties(rule.name, rule.level, config or {})
        if level == EnforcementLevel.DISABLED:
            own, _ = _config_entry(rule.name, (config or {}).get(rule.name, {}))
            mandatory = rule.level in (EnforcementLevel.MANDATORY, EnforcementLevel.REMEDIATE)
            disabled.append(DisabledPolicy(rule.name, mandatory, rule.name if own is not None else ALL_POLICIES))
    return disabled


@dataclass(frozen=True)
class DemotedPolicy:
    """A mandatory rule that `--policy-pack-config` sets to advisory: it runs, but no finding of it blocks `pulumi
    up`; `by` is the entry that does (the rule's own name, or `all`)."""

    policy: str
    by: str


_GATING = (EnforcementLevel.MANDATORY, EnforcementLevel.REMEDIATE)


def demoted_policies(config: Mapping[str, Any] | None) -> list[DemotedPolicy]:
    """The mandatory rules `config` sets to advisory, each with the entry that does, resolved as `disabled_policies`
    resolves a disabled one."""
    validate_policy_config(config)
    demoted = []
    for rule in RULES:
        level, _ = _level_and_properties(rule.name, rule.level, config or {})
        if rule.level in _GATING and level == EnforcementLevel.ADVISORY:
            own, _ = _config_entry(rule.name, (config or {}).get(rule.name, {}))
            demoted.append(DemotedPolicy(rule.name, rule.name if own is not None else ALL_POLICIES))
    return demoted


def gating_policies(config: Mapping[str, Any] | None) -> list[str]:
    """The pack's own gates still gating under `config`: its built-in mandatory (or remediate) rules whose findings
    still block `pulumi up`. None left, and the pack gates nothing: a rule the config promotes does not stand in for
    them (`max-hourly-cost` checks nothing without a budget, an advisory check was never the gate)."""
    validate_policy_config(config)
    return [
        rule.name
        for rule in RULES
        if rule.level in _GATING and _level_and_properties(rule.name, rule.level, config or {})[0] in _GATING
    ]


def _reported(policy: Any, args: Any, subject: str | None) -> list[tuple[str | None, str, bool]]:
    """(urn, message, checked) for each violation; an unknown value is reported as unchecked, as the SDK does."""
    reported: list[tuple[str | None, str, bool]] = []
    try:
        policy.validate(args, lambda message, urn=None: reported.append((urn or subject, message, True)))
    except UnknownValueError as unknown:
        reported.append((subject, f"cannot be checked before the update: {unknown.message}", False))
    return reported


def check_resources(resources: Sequence[PlannedResource], config: Mapping[str, Any] | None = None) -> list[Finding]:
    """Every rule over `resources`, through the same validate entry points `pulumi preview --policy-pack` calls.

    `config` has the shape of a `--policy-pack-config` file: policy name (or `all`) to a level
    ("advisory", "mandatory", "disabled") or to an object of settings and `enforcementLevel`;
    a document the rules cannot use, or with an entry that would do nothing (an unknown policy
    or setting), raises PolicyConfigError.
    """
    validate_policy_config(config)
    findings: list[Finding] = []
    props = [sdk_props(r.props) for r in resources]
    for rule, policy in zip(RULES, POLICIES):
        level, properties = _level_and_properties(rule.name, rule.level, config or {})
        if level == EnforcementLevel.DISABLED:
            continue
        if isinstance(policy, ResourceValidationPolicy):
            reported = [
                violation
                for r, r_props in zip(resources, props)
                for violation in _reported(
                    policy, ResourceValidationArgs(r.type, r_props, r.urn, r.name, _NO_OPTIONS, None, properties), r.urn
                )
            ]
        else:
            stack = [
                PolicyResource(r.type, r_props, r.urn, r.name, _NO_OPTIONS, None, None, [], {})
                for r, r_props in zip(resources, props)
            ]
            reported = _reported(policy, StackValidationArgs(stack, properties), None)
        mandatory = level in (EnforcementLevel.MANDATORY, EnforcementLevel.REMEDIATE)
        findings.extend(Finding(rule.name, mandatory and checked, urn, message) for urn, message, checked in reported)
    return findings


# What a rule's pass rests on, for a rule whose pass a reviewer should read (the pack reports only violations).
PASS_NOTES = {"max-hourly-cost": max_hourly_cost_pass}


def pass_notes(resources: Sequence[PlannedResource], config: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
    """(policy, what its pass rests on) for each enabled rule of PASS_NOTES that passes, with the same settings
    `check_resources` gives it."""
    validate_policy_config(config)
    planned = [PlannedResource(r.urn, r.type, r.name, sdk_props(r.props)) for r in resources]
    notes = []
    for rule in RULES:
        note_of = PASS_NOTES.get(rule.name)
        level, properties = _level_and_properties(rule.name, rule.level, config or {})
        if note_of is None or level == EnforcementLevel.DISABLED:
            continue
        try:
            note = note_of(planned, properties)
        except NotANumberError:  # the rule reports it as its violation: it does not pass
            note = None
        if note is not None:
            notes.append((rule.name, note))
    return notes
