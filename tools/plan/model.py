"""One offline plan: the program run under mocks, then everything a reviewer reads about it.

`build_plan` is shared by the CLI (`python -m tools.plan`), the benchmark and the tests, so
what `make bench` times is exactly what `make plan` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from policies.dra_rules import Finding, PlannedResource, check_resources
from tools.plan.files import WriteResult, plan_files, write_plan_files
from tools.plan.graph import Edge, PathStep, critical_path, dependency_edges
from tools.plan.mock_engine import ProgramRun, run_program
from tools.plan.settings import key_settings
from tools.plan.tree import PlanNode, build_tree
from tools.plan.values import mock_id_references, presentable

DEFAULT_OUT = Path("build/plan")


@dataclass
class Plan:
    stack: str
    run: ProgramRun
    roots: list[PlanNode] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    path: list[PathStep] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    files: WriteResult | None = None

    @property
    def error(self) -> BaseException | None:
        return self.run.error

    @property
    def blocked(self) -> bool:
        """True when `pulumi up` would refuse to run: the program failed or a mandatory policy fired."""
        return self.error is not None or any(finding.mandatory for finding in self.findings)

    def nodes(self) -> list[PlanNode]:
        return [node for root in self.roots for node in root.walk()]


def sorted_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (not f.mandatory, f.policy, f.urn or "", f.message))


def build_plan(
    stack: str,
    config: Mapping[str, str] | None = None,
    out: Path | None = DEFAULT_OUT,
    policy_config: Mapping[str, Any] | None = None,
) -> Plan:
    """Runs the program for `stack` and derives tree, graph, verdicts and files; `out=None` writes nothing."""
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
    if out is not None:
        plan.files = write_plan_files(plan_files(run.resources, inputs), out / stack)
    return plan
