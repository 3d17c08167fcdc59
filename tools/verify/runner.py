"""The verification as an ordered list of named steps, each ending in a pass, warn, fail or skip.

The first step reads the cluster once; the read-only checks judge that snapshot; the smoke
workloads come last because they change the cluster and take the longest. Results are
yielded one by one, so an interrupted run still reports what it finished.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, cast

from tools.verify.burnin import BurnInCluster, BurnInGate, BurnInRun, BurnInSettings
from tools.verify.checks import (
    CLUSTER_CHECKS,
    DRANET_DAEMONSET,
    DRANET_NAMESPACE,
    ClusterCheck,
    ClusterState,
    Discrepancy,
    Outcome,
    api_failure,
    unexpected_failure,
)
from tools.verify.cluster import Cluster, ClusterError, ClusterUnreachableError, UnusableAnswerError
from tools.verify.expectations import Expectations
from tools.verify.metrics import HeldGpu, MetricsSettings, read_attribution
from tools.verify.objects import current_slices
from tools.verify.queues import QUEUES_TITLE, check_queues
from tools.verify.smoke import GPU_WORKLOAD, NETWORK_WORKLOAD, SmokeRun, SmokeSettings, SmokeWorkload

PASS, FAIL, SKIP, WARN = "pass", "fail", "skip", "warn"
NO_METRICS = "the stack installs no GPU metrics exporter (gpuMetrics: false)"
NOT_HELD = "not run: it reads the exporter while the GPU smoke pod holds its GPU, and that pod never proved it did (see smoke-gpu)"
NO_INFINIBAND = "the stack has no InfiniBand GPU groups"
NOT_READ = "not run: the cluster could not be read"
UNREACHABLE = "not run: the cluster stopped answering (see the step that failed)"


@dataclass(frozen=True)
class CheckResult:
    name: str
    title: str
    status: str
    summary: str
    findings: tuple[Discrepancy, ...] = ()
    seconds: float = 0.0
    warnings: tuple[Discrepancy, ...] = ()


class ProgressDisplay(Protocol):
    def start(self, index: int, total: int, title: str) -> None: ...
    def update(self, text: str) -> None: ...
    def finish(self, result: CheckResult) -> None: ...


@dataclass(frozen=True)
class Step:
    name: str
    title: str
    run: Callable[[], Outcome]
    skip_reason: Callable[[], str | None]


def read_cluster_state(cluster: Cluster, expect: Expectations) -> ClusterState:
    return ClusterState(
        nodes=cluster.list_nodes(),
        driver_pods=cluster.list_pods(expect.driver_namespace),
        device_classes=cluster.list_device_classes(),
        resource_slices=cluster.list_resource_slices(),
        dranet=cluster.read_daemonset(DRANET_NAMESPACE, DRANET_DAEMONSET) if expect.infiniband else None,
    )


class Verification:
    def __init__(
        self,
        cluster: Cluster,
        expect: Expectations,
        smoke: SmokeSettings | None,
        progress: ProgressDisplay,
        clock: Callable[[], float] = time.monotonic,
        burn_in: BurnInSettings | None = None,
    ) -> None:
        """`smoke` None means read-only (--skip-smoke); `burn_in` None creates no burn-in (tools/verify/burnin.py)."""
        self.cluster = cluster
        self.expect = expect
        self.smoke = smoke
        self.progress = progress
        self.clock = clock
        self.state: ClusterState | None = None
        # Set once a step could not reach the cluster: the later steps are skipped, the run exits 2.
        self.unreachable = False
        # Set once a step could not judge the cluster's answers: the run goes on, and exits 2.
        self.unusable = False
        # What the exporter said while the GPU smoke pod held its GPU; the gpu-metrics step reports it.
        self.metrics: Outcome | None = None
        self.burn_in = BurnInGate(burn_in, expect, getattr(cluster, "server", ""), read_only=smoke is None)
        self.burn_in_settings = burn_in

    def _read(self) -> Outcome:
        try:
            self.state = read_cluster_state(self.cluster, self.expect)
        except (ClusterUnreachableError, UnusableAnswerError):
            raise
        except ClusterError as error:
            # An HTTP error at the first read (404, 431, 500) leaves every check unjudged: the cluster's answers could
            # not be used, exit 2 (docs/verify.md's exit codes), not 1, which says a check found the cluster wrong.
            raise UnusableAnswerError(str(error)) from None
        return Outcome(
            f"{len(self.state.nodes)} nodes, {len(self.state.driver_pods)} pods in {self.expect.driver_namespace}, "
            f"{len(self.state.device_classes)} DeviceClasses, {len(self.state.resource_slices)} ResourceSlices"
        )

    def _unread(self) -> str | None:
        return NOT_READ if self.state is None else None

    def _check_step(self, check: ClusterCheck) -> Step:
        def skip_reason() -> str | None:
            return NO_INFINIBAND if check.infiniband_only and not self.expect.infiniband else self._unread()

        def judge() -> Outcome:
            assert self.state is not None, "a check runs only after the cluster state was read (skip_reason)"
            return check.judge(self.state, self.expect)

        return Step(check.name, check.title, judge, skip_reason)

    def _read_metrics(self, pod: Mapping[str, Any], claim: Mapping[str, Any]) -> None:
        """Runs inside the GPU smoke workload, while its pod holds the GPU; a failure here never fails smoke-gpu."""
        namespace = self.expect.metrics_namespace
        if namespace is None or self.smoke is None:
            return
        settings = MetricsSettings(
            self.smoke.metrics_timeout_s, self.smoke.metrics_poll_interval_s, self.smoke.clock, self.smoke.sleep
        )
        try:
            self.metrics = read_attribution(
                self.cluster, namespace, HeldGpu.from_objects(pod, claim), settings, self.progress.update
            )
        except ClusterError as error:
            self.metrics = api_failure(error)
        except KeyboardInterrupt:
            raise
        except Exception as error:
            self.metrics = unexpected_failure(error)

    def _metrics_step(self) -> Step:
        def skip_reason() -> str | None:
            if self.expect.metrics_namespace is None:
                return NO_METRICS
            if self.smoke is None:
                return "skipped (--skip-smoke): it needs the GPU smoke pod"
            return NOT_HELD if self.metrics is None else None

        def report() -> Outcome:
            assert self.metrics is not None, "reported only after the smoke pod held its GPU (skip_reason)"
            return self.metrics

        return Step("gpu-metrics", "GPU metrics name the smoke pod and its claim (dcgm-exporter)", report, skip_reason)

    def _smoke_step(self, name: str, title: str, workload: SmokeWorkload, infiniband_only: bool) -> Step:
        def skip_reason() -> str | None:
            if infiniband_only and not self.expect.infiniband:
                return NO_INFINIBAND
            if self.smoke is None:
                return "skipped (--skip-smoke)"
            if workload.template not in self.expect.claim_templates:
                return f"the stack does not create the {workload.template} claim template (builtinClaimTemplates)"
            if self.state is not None and not current_slices(self.state.resource_slices, workload.driver):
                return f"not run: no node publishes {workload.driver} devices, so the claim cannot be allocated (see the slice checks)"
            return self._unread()

        def run() -> Outcome:
            assert self.smoke is not None, "a smoke step runs only with smoke settings (skip_reason)"
            held = self._read_metrics if workload is GPU_WORKLOAD else None
            return SmokeRun(self.cluster, self.expect, self.smoke, self.progress.update, held).run(workload)

        return Step(name, title, run, skip_reason)

    def _burn_in_step(self) -> Step:
        def skip_reason() -> str | None:
            return self._unread() or self.burn_in.skip_reason(self.state.nodes if self.state else [])

        def run() -> Outcome:
            assert self.burn_in_settings is not None and self.state is not None, "see skip_reason"
            cluster = cast(BurnInCluster, self.cluster)
            outcome = BurnInRun(
                cluster, self.expect, self.burn_in_settings, self.state.nodes, self.progress.update
            ).run()
            self.burn_in.record(outcome)
            return outcome

        return Step(
            "burn-in", "Burn-in: NCCL all_reduce_perf over each GPU group, floor per platform", run, skip_reason
        )

    def steps(self) -> list[Step]:
        return [
            Step("cluster-read", "Read the cluster", self._read, lambda: None),
            *(self._check_step(check) for check in CLUSTER_CHECKS),
            # Only with queues: a stack without them keeps its steps and their numbers.
            *(
                [Step("queues", QUEUES_TITLE, lambda: check_queues(self.cluster, self.expect.queues), lambda: None)]
                if self.expect.queues.enabled
                else []
            ),
            self._smoke_step("smoke-gpu", "Smoke workload: gpu claim, nvidia-smi -L", GPU_WORKLOAD, False),
            self._metrics_step(),
            self._smoke_step(
                "smoke-ib-network",
                "Smoke workload: ib-network claim, /sys/class/net and /sys/class/infiniband",
                NETWORK_WORKLOAD,
                True,
            ),
            self._burn_in_step(),
        ]

    def run(self) -> Iterator[CheckResult]:
        steps = self.steps()
        for index, step in enumerate(steps, 1):
            self.progress.start(index, len(steps), step.title)
            result = self._run_step(step)
            self.progress.finish(result)
            yield result

    def _run_step(self, step: Step) -> CheckResult:
        reason = step.skip_reason() or (UNREACHABLE if self.unreachable else None)
        if reason:
            return CheckResult(step.name, step.title, SKIP, reason)
        started = self.clock()
        try:
            outcome = step.run()
        except ClusterError as error:
            outcome = api_failure(error)
        except Exception as error:
            outcome = unexpected_failure(error)
        self.unreachable = self.unreachable or outcome.unreachable
        self.unusable = self.unusable or outcome.unusable
        status = FAIL if not outcome.passed else WARN if outcome.warnings else PASS
        return CheckResult(
            step.name,
            step.title,
            status,
            outcome.summary,
            outcome.findings,
            round(self.clock() - started, 3),
            outcome.warnings,
        )
