"""The rule framework: a rule is a pure check function with a name, a level and the settings it reads.

`ResourceRule` judges one resource at a time, `StackRule` the whole stack; both serve the
policy SDK's validate entry points (a number a rule reads that is none, `planned.NotANumberError`, is the rule's
violation, never a traceback), so `pulumi preview --policy-pack policies` and the offline
runner (`runner.check_resources`) call the same code. A setting a rule does not read is refused."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from .planned import NotANumberError, PlannedResource


class PolicyConfigError(ValueError):
    """A `--policy-pack-config` document the rules cannot use; the message names the entry and what is allowed."""


ALL_POLICIES = "all"
LEVEL_KEY = "enforcementLevel"


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f' (did you mean "{close[0]}"?)' if close else ""


def json_kind(value: Any) -> str:
    """What an unknown setting was given, by its JSON type only: the setting's name is the user's, so it may be
    `token` or `password`, and its value then a credential (hostile round five saw it quoted)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    return "null" if value is None else "a list" if isinstance(value, list) else "an object"


def problems_text(problems: Sequence[str]) -> str:
    """One problem as itself; several as a count and one line each, as the stack config's refusal lists them, so a
    config with two mistakes needs one run, not two."""
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems:\n" + "\n".join(f"  - {problem}" for problem in problems)


def _unknown_setting_message(policy: str, key: str, value: Any, known: Sequence[str]) -> str:
    allowed = (
        f"its settings are {', '.join([LEVEL_KEY, *known])}" if known else f"it takes no settings, only {LEVEL_KEY}"
    )
    return f'{policy}: unknown setting "{key}" (given {json_kind(value)}){did_you_mean(key, known)}; {allowed}'


ResourceCheck = Callable[[PlannedResource, Mapping[str, Any]], list[str]]
StackCheck = Callable[[Sequence[PlannedResource], Mapping[str, Any]], list[tuple[str | None, str]]]


@dataclass(frozen=True)
class _Rule:
    name: str
    description: str
    level: EnforcementLevel
    check: Callable[..., list]
    config_schema: PolicyConfigSchema | None = None
    # The setting without which the rule checks nothing (max-hourly-cost's budget), or None: an entry that sets the
    # rule's level without it would claim a check, or a gate, that never happens, so the runner refuses it.
    needs: str | None = None

    def setting_names(self) -> list[str]:
        """The settings this rule reads: its config schema's properties."""
        return sorted(self.config_schema.properties) if self.config_schema else []

    def check_settings(self, given: Mapping[str, Any]) -> None:
        """PolicyConfigError for a setting the rule does not read, so a misspelt one cannot quietly do nothing.

        The pack has to check this itself: a policy's config schema reaches the CLI as properties
        and required only, and the CLI validates against an object schema that allows any other key.
        """
        unknown = self.unknown_settings(given)
        if unknown:
            raise PolicyConfigError(problems_text(unknown))

    def unknown_settings(self, given: Mapping[str, Any]) -> list[str]:
        """A message for each setting in `given` the rule does not read, all of them, so one run names every one."""
        known = self.setting_names()
        return [_unknown_setting_message(self.name, key, given[key], known) for key in given if key not in known]

    def _settings(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Schema defaults under the given config: the CLI may or may not have filled them in."""
        self.check_settings(given)
        properties = self.config_schema.properties if self.config_schema else {}
        return {**{key: spec["default"] for key, spec in properties.items() if "default" in spec}, **given}

    def _policy_fields(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "enforcement_level": self.level,
            "config_schema": self.config_schema,
        }


class ResourceRule(_Rule):
    """A rule that judges one resource at a time; `check` is a ResourceCheck."""

    def policy(self) -> ResourceValidationPolicy:
        def validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
            resource = PlannedResource(args.urn, args.resource_type, args.name, args.props)
            try:
                messages = self.check(resource, self._settings(args.get_config()))
            except NotANumberError as wrong:
                messages = [str(wrong)]
            for message in messages:
                report_violation(message, None)

        return ResourceValidationPolicy(validate=validate, **self._policy_fields())


class StackRule(_Rule):
    """A rule that needs the whole stack; `check` is a StackCheck."""

    def policy(self) -> StackValidationPolicy:
        def validate(args: StackValidationArgs, report_violation: ReportViolation) -> None:
            resources = [PlannedResource(r.urn, r.resource_type, r.name, r.props) for r in args.resources]
            try:
                violations = self.check(resources, self._settings(args.get_config()))
            except NotANumberError as wrong:
                violations = [(wrong.urn, str(wrong))]
            for urn, message in violations:
                report_violation(message, urn)

        return StackValidationPolicy(validate=validate, **self._policy_fields())


MANDATORY = EnforcementLevel.MANDATORY
ADVISORY = EnforcementLevel.ADVISORY
