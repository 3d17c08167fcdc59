"""One offline plan: the program run under mocks, then everything a reviewer reads about it.

`build_plan` is shared by the CLI (`python -m tools.plan`), the benchmark and the tests, so
what `make bench` times is exactly what `make plan` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.cost import COST_ESTIMATE_TYPE
from components.redaction import redacted
from policies.dra_guardrails import (
    RULES,
    DemotedPolicy,
    DisabledPolicy,
    Finding,
    PlannedResource,
    check_resources,
    demoted_policies,
    disabled_policies,
    gating_policies,
    pass_notes,
    validate_policy_config,
)
from tools.plan.baseline import read_baseline
from tools.plan.changes import Changes, compare, snapshot, written_name
from tools.plan.driver_line import DriverLineChange, driver_line_change, driver_snapshot
from tools.plan.driver_modes import accepted_outages, driver_mode_transition
from tools.plan.files import WriteResult, plan_files, write_plan_files
from tools.plan.graph import Edge, PathStep, critical_path, dependency_edges
from tools.plan.minor_upgrade import GroupDowngrade, MinorUpgrade, group_downgrades, minor_upgrade
from tools.plan.mock_engine import ProgramRun, run_program
from tools.plan.rollout import Rollout, rollout_of
from tools.plan.settings import key_settings
from tools.plan.stack_source import check_stack_name
from tools.plan.tree import PlanNode, build_tree
from tools.plan.values import mock_id_references, presentable

DEFAULT_OUT = Path("build/plan")
# A plan whose policies were all disabled checked nothing: it must not read as a gate that passed.
NO_POLICY_RAN = (
    "no policy ran: --policy-config ({by}) disabled all {count} rules of the pack ({mandatory} of them mandatory), "
    "so nothing was checked and the gate does not pass; enable the rules to gate `pulumi up`"
)

# A plan whose mandatory rules were all demoted to advisory (or disabled) ran rules whose findings block nothing:
# no more a gate than one whose rules were all disabled.
NO_RULE_GATES = (
    "no rule gates: --policy-config ({by}) demoted {demoted} and disabled {disabled} of the pack's {mandatory} "
    "mandatory rules, and sets none to mandatory, so no finding blocks `pulumi up` and the gate does not pass; "
    "give the rules back their mandatory level to gate `pulumi up`"
)


@dataclass
class Plan:
    stack: str
    run: ProgramRun
    roots: list[PlanNode] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    path: list[PathStep] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    # (policy, what its pass rests on) for a rule that passes and says so (the budget: its total and price caveats).
    passes: list[tuple[str, str]] = field(default_factory=list)
    # The rules --policy-config turns off: none of them ran, so "policies pass" would not be true of them.
    disabled: list[DisabledPolicy] = field(default_factory=list)
    # The mandatory rules --policy-config sets to advisory: they ran, but none of their findings blocks.
    demoted: list[DemotedPolicy] = field(default_factory=list)
    # Whether no rule is left mandatory under --policy-config: then nothing blocks, and the gate does not pass.
    ungated: bool = False
    files: WriteResult | None = None
    rollouts: list[Rollout] = field(default_factory=list)
    # What the JSON plan records for a later baseline (tools/plan/changes.py snapshot).
    recorded: dict[str, Any] = field(default_factory=dict)
    # None without a baseline; else every recorded field that differs from it, with the table's rows.
    changes: Changes | None = None
    # The cluster's minor moving against the baseline (None when it stays, or without one).
    minor: MinorUpgrade | None = None
    # Node groups whose minor goes down against the baseline (refused), the cluster's own move apart.
    downgrades: tuple[GroupDowngrade, ...] = ()
    # A move between driver modes: what to do to existing nodes, in order (tools/plan/driver_modes.py).
    driver_steps: tuple[str, ...] = ()
    # Why there is no baseline (no git checkout, the revision has no such stack, its plan failed); None otherwise.
    no_baseline: str | None = None
    # Where the baseline came from, as the plan says it ("HEAD (abc1234), the last commit, by default"); None without.
    baseline_from: str | None = None
    # The DRA driver release's {chart, version}, recorded for a later --baseline; and its move between chart
    # lines against the baseline (None without one, or when it stays on its line).
    dra_driver: dict[str, str] | None = None
    driver_change: DriverLineChange | None = None

    @property
    def cost(self) -> dict[str, Any] | None:
        """The estimate the program registered (`nebius-dra:cost:CostEstimate`), or None when it registered none."""
        estimates = self.run.of_type(COST_ESTIMATE_TYPE)
        return dict(estimates[0].inputs) if len(estimates) == 1 else None

    @property
    def error(self) -> BaseException | None:
        return self.run.error

    @property
    def refusals(self) -> list[str]:
        """Why the config cannot be applied against the baseline, each naming the key, what it moves to and what is
        allowed: the DRA driver moving back to 25.x, kubernetesVersion skipping or lowering a minor, a node group's
        minor going down."""
        found = []
        if self.driver_change is not None and self.driver_change.refused:
            found.append(
                f"nebius-dra:draDriverChart: {self.driver_change.before} -> {self.driver_change.after} is refused: "
                + " ".join(self.driver_change.steps)
            )
        if self.minor is not None and self.minor.refused is not None:
            found.append(f"nebius-dra:kubernetesVersion: {self.minor.refused}")
        found += [f"nebius-dra:kubernetesVersion: {downgrade.refused}" for downgrade in self.downgrades]
        return found

    @property
    def no_policy_ran(self) -> bool:
        """Whether --policy-config disabled every rule of the pack: nothing was checked, so the gate did not pass."""
        return len({disabled.policy for disabled in self.disabled}) >= len(RULES)

    def no_policy_text(self) -> str:
        """`NO_POLICY_RAN` for this plan: the entries that disabled the rules, how many, how many mandatory."""
        by = ", ".join(sorted({disabled.by for disabled in self.disabled}))
        mandatory = sum(1 for disabled in self.disabled if disabled.mandatory)
        return NO_POLICY_RAN.format(by=by, count=len(RULES), mandatory=mandatory)

    def no_rule_gates_text(self) -> str:
        """`NO_RULE_GATES` for this plan: the entries that demoted or disabled the mandatory rules, how many."""
        by = ", ".join(sorted({entry.by for entry in self.demoted} | {entry.by for entry in self.disabled}))
        disabled = sum(1 for entry in self.disabled if entry.mandatory)
        mandatory = len(gating_policies(None))
        return NO_RULE_GATES.format(by=by, demoted=len(self.demoted), disabled=disabled, mandatory=mandatory)

    @property
    def blocked(self) -> bool:
        """True when `pulumi up` must not run: the program failed, a mandatory policy fired, the driver moves back,
        the cluster's minor moves in a way the skew policy forbids, or it would fail deleting a protected group; and
        the gate did not pass when no policy ran at all (`no_policy_ran`)."""
        return bool(self.gate_failures)

    @property
    def gate_failures(self) -> list[str]:
        """Why the gate does not pass, each in a few words (the JSON plan's `reason`); empty when it passes."""
        mandatory = sum(1 for finding in self.findings if finding.mandatory)
        failures = ["the program refused the config or failed (the plan's error)"] if self.error is not None else []
        failures += self.refusals
        if self.changes is not None and self.changes.protected_removals:
            failures.append(
                f"`pulumi up` would fail deleting the protected node group(s) {', '.join(self.changes.protected_removals)}"
            )
        failures += [f"{mandatory} mandatory policy violation(s)"] if mandatory else []
        if self.no_policy_ran:
            failures.append(self.no_policy_text())
        elif self.ungated:
            failures.append(self.no_rule_gates_text())
        return failures

    def nodes(self) -> list[PlanNode]:
        return [node for root in self.roots for node in root.walk()]


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (not f.mandatory, f.policy, f.urn or "", f.message))


def build_plan(
    stack: str,
    config: Mapping[str, str] | None = None,
    out: Path | None = DEFAULT_OUT,
    policy_config: Mapping[str, Any] | None = None,
    baseline: Any = None,
    stack_file: Path | None = None,
) -> Plan:
    """Runs the program for `stack` and derives tree, graph, verdicts and files; `out=None` or a refusal writes nothing.

    `baseline` is the JSON document of an earlier plan (`--format json`): what differs from it is in
    `changes`, each field with what the table of consequences says it does. The stack name, the policy config and the
    baseline are checked before anything runs: StackNameError, PolicyConfigError or BaselineError.
    `stack_file` is read instead of `Pulumi.<stack>.yaml` (`--stack-file`).
    """
    check_stack_name(stack)
    validate_policy_config(policy_config)
    before = read_baseline(baseline, stack) if baseline is not None else None
    driver_before = before.dra_driver if before is not None else None
    run = run_program(stack, config=config, stack_file=stack_file)
    plan = Plan(stack, run)
    if run.error is not None:
        return plan
    references = mock_id_references(run.resources)
    inputs = {resource.urn: presentable(resource.inputs, references) for resource in run.resources}
    settings = {resource.urn: key_settings(resource.type, inputs[resource.urn]) for resource in run.resources}
    plan.roots = build_tree(run.resources, settings)
    plan.edges = dependency_edges(run.resources)
    plan.path = critical_path(run.resources, plan.edges)
    planned = [PlannedResource(r.urn, r.type, r.name, r.inputs) for r in run.resources]
    plan.findings = sorted_findings(check_resources(planned, policy_config))
    plan.passes = pass_notes(planned, policy_config)
    plan.disabled = disabled_policies(policy_config)
    plan.demoted = demoted_policies(policy_config)
    plan.ungated = not gating_policies(policy_config)
    plan.rollouts = sorted(
        (r for r in (rollout_of(resource, inputs[resource.urn]) for resource in run.resources) if r is not None),
        key=lambda rollout: rollout.name,
    )
    plan.recorded = snapshot(run.resources, inputs, planned)
    plan.dra_driver = driver_snapshot(planned)
    plan.driver_change = driver_line_change(driver_before, plan.dra_driver)
    if before is not None:
        plan.changes = compare(before, plan.recorded, {r.urn: r for r in plan.rollouts})
        plan.minor = minor_upgrade(plan.changes)
        names = {group["urn"]: written_name(group) for group in plan.recorded["nodeGroups"]}
        plan.downgrades = group_downgrades(plan.changes, plan.minor, names)
        transition = driver_mode_transition(before, plan.recorded, accepted_outages(run.resources))
        plan.driver_steps = transition.steps
        plan.findings = sorted_findings([*plan.findings, *transition.findings])
    if out is not None and not plan.refusals:
        # A refused config is bad input, as one the program refuses: nothing of it is written.
        files = plan_files(run.resources, inputs)
        plan.files = write_plan_files({name: redacted(text) for name, text in files.items()}, out / stack)
    return plan
