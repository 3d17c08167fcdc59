"""One stack taken through the real Pulumi CLI onto the e2e control plane, in existing-cluster mode.

`CliStack.prepare` copies the project, writes the stack's file (its real file, or a variant's
config, plus what the local setup needs: every chart repository pointed at the local chart
repository), sets the control plane's kubeconfig as the secret `existingClusterKubeconfig` with
`pulumi config set --secret`, and creates what Nebius would have made: the groups' nodes and
the DRA driver's ResourceSlices (dra_fakes.py; no kubelet plugin runs here) and, on a fabric, Nebius's
network DeviceClasses. Everything else on the API server comes from `pulumi up`: the real provider,
the real charts.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cli_project import copy_project, write_stack_file
from dra_fakes import NEBIUS_CLASSES, create_stack_nodes, device_class
from dra_kube import Kube
from dra_scenarios import Scenario
from dra_stack import Deployed, teardown

from components.config.errors import config_key
from tests.helpers import without_cluster_keys

# Long enough for the first start of the Python host and the provider, and for Helm's wait on 2 cores.
CLI_TIMEOUT_S = 900.0


def repository_settings(config: Any, url: str) -> dict[str, str]:
    """The chart repository keys of the releases the program installs for `config` (its parsed StackConfig), all
    at `url`: the program refuses a repository of a chart it does not install (components/config/dependent.py),
    so the Operators' keys follow its own decision, and the metrics' never (LOCAL_SETTINGS turns them off)."""
    keys = ["draDriverRepository"]
    keys += ["gpuOperatorRepository"] if config.driver.gpu_operator else []
    keys += ["networkOperatorRepository"] if config.driver.network_operator else []
    return {config_key(key): url for key in keys}


# dcgm-exporter 4.8.3, the first chart whose DRA mode reads resource.k8s.io/v1 (the stack refuses
# older ones), is in no public snapshot this environment has (../shared/vendor/PROVENANCE.md): the
# exporter cannot be installed from a real chart here, so these stacks turn GPU metrics off.
LOCAL_SETTINGS = {"gpuMetrics": "false"}


def local_config(scenario: Scenario, repository: str) -> dict[str, Any]:
    """The scenario's config as these stacks run it: onto the local control plane (existing-cluster mode, which
    refuses the keys of a cluster it creates none of, so they are at their defaults), every chart repository the
    local one, and `LOCAL_SETTINGS`."""
    config = without_cluster_keys(scenario.raw_config())
    config.update(repository_settings(scenario.config(), repository))
    config.update({config_key(key): value for key, value in LOCAL_SETTINGS.items()})
    return config


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err

    def __str__(self) -> str:
        return f"exit {self.code}\n--- stdout\n{self.out[-6000:]}\n--- stderr\n{self.err[-4000:]}"


@dataclass
class CliStack:
    scenario: Scenario
    project: Path
    engine: Any
    kube: Kube
    kubeconfig: str
    deployed: Deployed
    history: list[tuple[list[str], Result]] = field(default_factory=list)
    preview_text: str = ""  # the first preview's output, for the checks that read what it warned

    @property
    def name(self) -> str:
        return self.scenario.name

    @classmethod
    def prepare(
        cls, scenario: Scenario, workdir: Path, engine: Any, kube: Kube, kubeconfig: Path, repository: str
    ) -> CliStack:
        project = copy_project(workdir / "project")
        write_stack_file(project, scenario.name, local_config(scenario, repository))
        stack = cls(
            scenario, project, engine, kube, kubeconfig.read_text(), Deployed(scenario, scenario.config(), workdir)
        )
        stack.ok("stack", "init", scenario.name)
        stack.ok("config", "set", "--secret", config_key("existingClusterKubeconfig"), "--", stack.kubeconfig)
        create_stack_nodes(kube, scenario.name, stack.deployed.config, stack.deployed.nodes)
        if stack.deployed.config.infiniband_groups:
            # Nebius installs DRANet and its two network DeviceClasses on a fabric's clusters; the NVIDIA
            # classes come from the DRA driver's real chart with `pulumi up`.
            for name, expression in NEBIUS_CLASSES.items():
                if kube.get("resource.k8s.io/v1", "DeviceClass", name) is None:
                    kube.create(device_class(name, expression))
        return stack

    def pulumi(self, *args: str, timeout: float = CLI_TIMEOUT_S) -> Result:
        argv = with_stack(list(args), self.name)
        result = Result(*self.engine.run(argv, self.project, timeout=timeout))
        self.history.append((argv, result))
        return result

    def ok(self, *args: str, timeout: float = CLI_TIMEOUT_S) -> Result:
        result = self.pulumi(*args, timeout=timeout)
        assert result.code == 0, f"`pulumi {' '.join(args)}` failed: {result}"
        return result

    def state(self) -> dict[str, Any]:
        return json.loads(self.ok("stack", "export").out)

    def resources(self) -> list[dict[str, Any]]:
        return [r for r in self.state()["deployment"].get("resources") or [] if not r["type"].startswith("pulumi:")]

    def close(self) -> None:
        """Whatever a failed test left: the stack's state goes with the engine's directory, the cluster is emptied."""
        teardown(self.kube)


def with_stack(args: list[str], stack: str) -> list[str]:
    """`--stack` after the command's words and before its first flag (or a `--`), except for `stack init NAME`."""
    if args[:2] == ["stack", "init"]:
        return args
    first_flag = next((i for i, arg in enumerate(args) if arg.startswith("-")), len(args))
    return [*args[:first_flag], "--stack", stack, *args[first_flag:]]


def summary_counts(text: str) -> dict[str, int]:
    """`Resources:` block of a preview or update: {"create": 3, "update": 1, "unchanged": 7, ...}."""
    counts: dict[str, int] = {}
    for number, verb in re.findall(r"^\s+[-+~]*\s*(\d+) (to \w+|\w+)\s*$", text.split("Resources:", 1)[-1], re.M):
        counts[verb.removeprefix("to ")] = int(number)
    return counts
