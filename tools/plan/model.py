"""One offline plan: the program run under mocks, then everything a reviewer reads about it.

`build_plan` is shared by the CLI (`python -m tools.plan`), the benchmark and the tests, so
what `make bench` times is exactly what `make plan` does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.cost import COST_ESTIMATE_TYPE
from policies.dra_guardrails import Finding, PlannedResource, check_resources, validate_policy_config
from tools.plan.driver_line import DriverLineChange, baseline_driver, driver_line_change, driver_snapshot
from tools.plan.files import WriteResult, plan_files, write_plan_files
from tools.plan.graph import Edge, PathStep, critical_path, dependency_edges
from tools.plan.mock_engine import ProgramRun, run_program
from tools.plan.rollout import Recreation, Rollout, baseline_templates, node_group_snapshots, recreations, rollout_of
from tools.plan.settings import key_settings
from tools.plan.tree import PlanNode, build_tree
from tools.plan.values import mock_id_references, presentable

DEFAULT_OUT = Path("build/plan")
# Pulumi's own rule (`tokens.IsName` and the 100-character limit that `pulumi stack init` enforces):
# ASCII letters, digits, '-', '_' and '.'. The name becomes `Pulumi.<stack>.yaml` and `<out>/<stack>/`,
# so '.' and '..', which Pulumi would accept, are refused too: as a folder they mean "here" and "up".
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
STACK_NAME_RULE = "1 to 100 ASCII letters, digits, '-', '_' or '.', and not '.' or '..'"


class StackNameError(ValueError):
    """A `--stack` value that is not a Pulumi stack name; it is never used as a path."""


def check_stack_name(stack: str) -> str:
    """`stack`, when it is a stack name Pulumi accepts and a safe single path component; else StackNameError."""
    if not isinstance(stack, str) or not STACK_NAME.fullmatch(stack) or stack in (".", ".."):
        qualified = "; give the bare stack name, not org/project/stack" if "/" in str(stack) else ""
        raise StackNameError(f"invalid stack name {stack!r}: a stack name is {STACK_NAME_RULE}{qualified}")
    return stack


@dataclass
class Plan:
    stack: str
    run: ProgramRun
    roots: list[PlanNode] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    path: list[PathStep] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    files: WriteResult | None = None
    rollouts: list[Rollout] = field(default_factory=list)
    node_groups: list[dict[str, Any]] = field(default_factory=list)
    # None without a baseline; else the node groups whose template changes against it (nodes recreated).
    recreations: list[Recreation] | None = None
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
    def blocked(self) -> bool:
        """True when `pulumi up` must not run: the program failed, a mandatory policy fired, or the driver moves back."""
        refused = self.driver_change is not None and self.driver_change.refused
        return self.error is not None or refused or any(finding.mandatory for finding in self.findings)

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
) -> Plan:
    """Runs the program for `stack` and derives tree, graph, verdicts and files; `out=None` writes nothing.

    `baseline` is the JSON document of an earlier plan (`--format json`): node groups whose template
    changes against it are listed in `recreations`. The stack name, the policy config and the
    baseline are checked before anything runs: StackNameError, PolicyConfigError or BaselineError.
    """
    check_stack_name(stack)
    validate_policy_config(policy_config)
    before = baseline_templates(baseline, stack) if baseline is not None else None
    driver_before = baseline_driver(baseline) if baseline is not None else None
    run = run_program(stack, config=config)
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
    plan.rollouts = sorted(
        (r for r in (rollout_of(resource, inputs[resource.urn]) for resource in run.resources) if r is not None),
        key=lambda rollout: rollout.name,
    )
    plan.node_groups = node_group_snapshots(run.resources, inputs)
    plan.dra_driver = driver_snapshot(planned)
    plan.driver_change = driver_line_change(driver_before, plan.dra_driver)
    if before is not None:
        plan.recreations = recreations(before, plan.node_groups, {r.urn: r for r in plan.rollouts})
    if out is not None:
        plan.files = write_plan_files(plan_files(run.resources, inputs), out / stack)
    return plan
