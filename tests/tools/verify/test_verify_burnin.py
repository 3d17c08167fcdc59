"""The burn-in step: its objects, its verdict on real and variant all_reduce_perf output, its gate and its cleanup."""

from __future__ import annotations

import copy
import json
import math
import os
import re
import subprocess
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from components.config.stack import parse_stack_config
from components.config.stack_file import load_stack_config, program_config
from components.dra_constants import IB_TEMPLATE, MULTI_GPU_TEMPLATE, NODE_GROUP_LABEL
from policies.dra_guardrails.rdma_pod_rules import rdma_pod_problems
from tests.helpers import ROOT, TESTS
from tests.nccl_format import Fabric, render, with_bandwidth
from tools.verify import __main__ as cli
from tools.verify.burnin import BurnInGate, BurnInRun, BurnInSettings, fingerprint
from tools.verify.burnin_job import (
    RUN_LABEL,
    BurnInPlan,
    headless_service,
    job,
    new_ssh_keys,
    owned_by,
    pod_spec,
    ssh_secret,
)
from tools.verify.burnin_verdict import PodOutput, floor_for, judge_output
from tools.verify.checks import Outcome
from tools.verify.cluster import ClusterError
from tools.verify.expectations import expectations_for, load_expectations
from tools.verify.floors import FLOORS_FILE, FloorsError, load_floors
from tools.verify.nccl_output import parse_all_reduce
from tools.verify.smoke import SmokeInterrupted

CAPTURE = (TESTS / "data" / "nccl" / "all_reduce_perf-h200x1.txt").read_text(encoding="utf-8")
GIB = 1 << 30
PROD = load_expectations("prod")
TRAIN = PROD.group("h200-train")
KUBERNETES = "1.34.0"  # prod's kubernetesVersion; the other supported minors are checked too


def fabric_plan(nodes: int = 4, **changes: Any) -> BurnInPlan:
    plan = BurnInPlan(
        name="verify-burnin-h200-train-abcde",
        namespace=PROD.claims_namespace,
        group="h200-train",
        nodes=nodes,
        gpus=8,
        nics=8,
        tolerations=({"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"},),
        image="cr.eu-north1.nebius.cloud/nebius-benchmarks/nccl-tests:2.23.4-ubu22.04-cu12.4",
        binary="/opt/nccl_tests/build/all_reduce_perf",
        deadline_s=1200,
    )
    return replace(plan, **changes)


# --- the objects ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("minor", [KUBERNETES, "1.35.0", "1.36.0"])
def test_the_objects_validate_against_each_supported_kubernetes_schema(minor: str) -> None:
    plan = fabric_plan()
    made = {**job(plan), "metadata": {**job(plan)["metadata"], "uid": "0b0e5b9e-1111-4222-8333-944455556666"}}
    for manifest in (
        job(plan),
        ssh_secret(plan, new_ssh_keys(), owned_by(made)),
        headless_service(plan, owned_by(made)),
    ):
        kubernetes_validate.validate(manifest, minor, strict=True)
    kubernetes_validate.validate(job(fabric_plan(nodes=1, nics=0)), minor, strict=True)


def test_each_pod_claims_every_gpu_and_a_nic_per_gpu_through_the_stacks_templates() -> None:
    spec = pod_spec(fabric_plan())
    assert spec["resourceClaims"][0] == {"name": "gpus", "resourceClaimTemplateName": MULTI_GPU_TEMPLATE}
    assert [c["resourceClaimTemplateName"] for c in spec["resourceClaims"][1:]] == [IB_TEMPLATE] * 8
    [container] = spec["containers"]
    assert [c["name"] for c in container["resources"]["claims"]] == ["gpus", *(f"nic-{i}" for i in range(8))]
    assert spec["nodeSelector"] == {NODE_GROUP_LABEL: "h200-train"}
    [term] = spec["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term == {
        "labelSelector": {"matchLabels": {RUN_LABEL: "verify-burnin-h200-train-abcde"}},
        "topologyKey": "kubernetes.io/hostname",
    }
    assert spec["subdomain"] == "verify-burnin-h200-train-abcde"


def test_the_job_is_indexed_one_pod_per_node_and_ends_when_the_launcher_succeeds() -> None:
    spec = job(fabric_plan())["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (
        "Indexed",
        4,
        4,
        0,
    )
    assert spec["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    assert spec["activeDeadlineSeconds"] == 1200 and spec["ttlSecondsAfterFinished"] > 0
    script = spec["template"]["spec"]["containers"][0]["command"][2]
    assert "-np 32 -H verify-burnin-h200-train-abcde-0.verify-burnin-h200-train-abcde:8," in script
    # The header of the run prints these back, and the verdict compares the two (FABRIC, SINGLE below).
    assert script.rstrip().endswith("/opt/nccl_tests/build/all_reduce_perf -b 8 -e 1073741824 -f 2 -t 1 -g 1 -c 1")
    alone = job(fabric_plan(nodes=1))["spec"]
    assert "successPolicy" not in alone and alone["template"]["spec"]["containers"][0]["command"][2].endswith(
        "-g 8 -c 1\n"
    )


def test_the_pod_passes_the_packs_rdma_rule_and_would_be_refused_without_ipc_lock() -> None:
    spec = pod_spec(fabric_plan())
    assert rdma_pod_problems(spec, {IB_TEMPLATE}) == []
    broken = copy.deepcopy(spec)
    del broken["containers"][0]["securityContext"]
    assert rdma_pod_problems(broken, {IB_TEMPLATE})


def test_the_secret_and_service_are_owned_by_the_job() -> None:
    owners = owned_by({"metadata": {"name": "j", "uid": "u"}})
    assert ssh_secret(fabric_plan(), new_ssh_keys(), owners)["metadata"]["ownerReferences"] == owners
    service = headless_service(fabric_plan(), owners)
    assert service["spec"]["clusterIP"] == "None" and service["spec"]["publishNotReadyAddresses"] is True


# --- the verdict ---------------------------------------------------------------------------------------------

HOSTS = tuple(f"verify-burnin-h200-train-abcde-{i}" for i in range(4))
NODES = [f"computeinstance-e00train{i}" for i in range(4)]
FLOORS = load_floors(FLOORS_FILE)
# What the Job asks each all_reduce_perf process for: one per GPU across nodes, every GPU of the pod alone.
FABRIC = fabric_plan().sweep
SINGLE = fabric_plan(nodes=1).sweep


def fabric_output(busbw_at_1g: float, wrong: int = 0) -> PodOutput:
    run = with_bandwidth(
        parse_all_reduce(CAPTURE),
        Fabric(HOSTS),
        lambda size: busbw_at_1g if size == GIB else busbw_at_1g / 4,
        lambda size: wrong if size == GIB else 0,
    )
    return PodOutput(f"{HOSTS[0]}-x7k2p", HOSTS[0], NODES[0], render(run))


def test_the_floors_table_has_a_floor_for_prods_fabric_and_for_one_node() -> None:
    assert floor_for(FLOORS, "gpu-h200-sxm", 4).gbps == 365
    assert floor_for(FLOORS, "gpu-h200-sxm", 1).gbps == 374
    assert floor_for(FLOORS, "gpu-b300-sxm", 2) is None


def test_a_fabric_at_its_published_bandwidth_passes() -> None:
    outcome, _ = judge_output(
        fabric_output(455.9), NODES, HOSTS, 8, floor_for(FLOORS, "gpu-h200-sxm", 4), "h200-train", FABRIC
    )
    assert outcome.passed and not outcome.warnings, outcome.findings
    assert outcome.summary.startswith(
        "455.9 GB/s busbw at 1073741824 B over 32 GPUs on nodes computeinstance-e00train0"
    )


def test_a_fabric_below_its_floor_fails_naming_every_node() -> None:
    outcome, _ = judge_output(
        fabric_output(48.0), NODES, HOSTS, 8, floor_for(FLOORS, "gpu-h200-sxm", 4), "h200-train", FABRIC
    )
    [finding] = outcome.findings
    assert finding.subject == f"h200-train: bus bandwidth on nodes {', '.join(NODES)}"
    assert finding.expected.startswith("at least 365 GB/s") and finding.found.startswith(
        "48 GB/s busbw at 1073741824 B"
    )
    assert "bisect" in finding.likely_cause


@pytest.mark.parametrize("busbw", [math.nan, math.inf, -math.inf, -1.0, 1e6])
@pytest.mark.parametrize("floor", [True, False], ids=["floor", "no-floor"])
def test_a_bandwidth_that_is_no_measurement_fails_with_or_without_a_floor(busbw: float, floor: bool) -> None:
    """`nan < floor` is false: a NaN (or an infinity, or a figure out of range) would pass every floor if compared."""
    given = floor_for(FLOORS, "gpu-h200-sxm", 4) if floor else None
    outcome, _ = judge_output(fabric_output(busbw), NODES, HOSTS, 8, given, "h200-train", FABRIC)
    assert not outcome.passed
    finding = outcome.findings[-1]
    assert finding.expected == "a bus bandwidth from 0 to 100000 GB/s at the largest size"
    assert f"(out of place {busbw:g}, in place {busbw:g})" in finding.found


def _with_row(log: str, size: int, replace_row: str) -> str:
    lines = log.splitlines()
    [index] = [i for i, line in enumerate(lines) if line.split()[:1] == [str(size)]]
    lines[index] = replace_row
    return "\n".join(lines) + "\n"


# glibc's printf writes "-nan" for a NaN with its sign bit set; other C libraries "NaN", "Infinity".
@pytest.mark.parametrize("figure", ["nan", "-nan", "NaN", "inf", "-inf", "Infinity"])
@pytest.mark.parametrize(
    "column", [5, 6, 7, 9, 10, 11], ids=["oop-time", "oop-algbw", "oop-busbw", "ip-time", "ip-algbw", "ip-busbw"]
)
def test_a_nan_or_inf_in_any_column_of_the_judged_row_fails_naming_it(figure: str, column: int) -> None:
    """Such a row once matched no pattern and was dropped, and the 512 MiB row was judged in its place."""
    log = fabric_output(455.9).log
    fields = next(line for line in log.splitlines() if line.split()[:1] == [str(GIB)]).split()
    fields[column] = figure
    outcome, _ = judge_output(
        replace(fabric_output(455.9), log=_with_row(log, GIB, "  ".join(fields))),
        NODES,
        HOSTS,
        8,
        floor_for(FLOORS, "gpu-h200-sxm", 4),
        "h200-train",
        FABRIC,
    )
    assert not outcome.passed
    place = "out-of-place" if column < 9 else "in-place"
    name = ("time", "algbw", "busbw")[(column - 5) % 4]
    [unmeasured] = [f for f in outcome.findings if "measurements" in f.subject]
    assert f"{GIB} B ({place} {name})" in unmeasured.found


def test_a_nan_at_a_smaller_size_fails_too() -> None:
    log = fabric_output(455.9).log
    fields = next(line for line in log.splitlines() if line.split()[:1] == ["1048576"]).split()
    fields[7] = "-nan"
    outcome, _ = judge_output(
        replace(fabric_output(455.9), log=_with_row(log, 1048576, "  ".join(fields))),
        NODES,
        HOSTS,
        8,
        None,
        "h200-train",
        FABRIC,
    )
    [unmeasured] = outcome.findings
    assert (
        unmeasured.found
        == "no measurement (nan, inf, a bandwidth below 0, a busbw above 100000 GB/s, a time of 0) at 1048576 B (out-of-place busbw)"
    )


def test_an_average_bus_bandwidth_of_nan_fails() -> None:
    log = fabric_output(455.9).log
    average = next(line for line in log.splitlines() if line.startswith("# Avg bus bandwidth"))
    outcome, _ = judge_output(
        replace(fabric_output(455.9), log=log.replace(average, "# Avg bus bandwidth    : -nan")),
        NODES,
        HOSTS,
        8,
        floor_for(FLOORS, "gpu-h200-sxm", 4),
        "h200-train",
        FABRIC,
    )
    [unmeasured] = outcome.findings
    assert (
        unmeasured.found
        == "no measurement (nan, inf, a bandwidth below 0, a busbw above 100000 GB/s, a time of 0) at '# Avg bus bandwidth' (nan)"
    )


def test_a_repeated_size_is_judged_by_its_worst_row() -> None:
    """all_reduce_perf -N repeats every size (src/common.cu run_cycles): two rows of one size are a valid run, and a
    slow repeat must fail it whichever comes first."""
    log = fabric_output(455.9).log
    fast = next(line for line in log.splitlines() if line.split()[:1] == [str(GIB)])
    # busbw 10 and its algbw, 10 / (2 x 31/32).
    slow = fast.replace("455.9", " 10.0").replace("235.30", "  5.16")
    for rows in (f"{fast}\n{slow}", f"{slow}\n{fast}"):
        outcome, _ = judge_output(
            replace(fabric_output(455.9), log=log.replace(fast, rows)),
            NODES,
            HOSTS,
            8,
            floor_for(FLOORS, "gpu-h200-sxm", 4),
            "h200-train",
            FABRIC,
        )
        [finding] = outcome.findings
        assert finding.found.startswith(f"10 GB/s busbw at {GIB} B")


@pytest.mark.parametrize(
    "ranked_on",
    [(HOSTS[0],) * 4, ("other-job-0", "other-job-1", "other-job-2", "other-job-3"), (*HOSTS[:3], HOSTS[0])],
    ids=["one-host", "other-hosts", "a-host-twice"],
)
def test_a_run_whose_ranks_are_not_on_the_pods_judged_fails_whatever_the_bandwidth(ranked_on) -> None:
    """A "four-node" run whose rank lines name one host (or another Job's pods) proves nothing about the fabric."""
    run = with_bandwidth(parse_all_reduce(CAPTURE), Fabric(ranked_on), lambda size: 455.9)
    output = replace(fabric_output(455.9), log=render(run))
    outcome, _ = judge_output(output, NODES, HOSTS, 8, floor_for(FLOORS, "gpu-h200-sxm", 4), "h200-train", FABRIC)
    [finding] = outcome.findings
    assert finding.subject == f"h200-train: ranks of the run on nodes {', '.join(NODES)}"
    assert finding.expected == f"32 ranks, 8 (one per GPU) on each of the pods {', '.join(HOSTS)}"
    assert finding.found.startswith(f"32 ranks: {ranked_on.count(ranked_on[0]) * 8} on {ranked_on[0]}")


def test_wrong_elements_fail_whatever_the_bandwidth() -> None:
    outcome, _ = judge_output(
        fabric_output(455.9, wrong=3), NODES, HOSTS, 8, floor_for(FLOORS, "gpu-h200-sxm", 4), "h200-train", FABRIC
    )
    [finding] = outcome.findings
    assert "data check" in finding.subject and "wrong elements at sizes 1073741824 B" in finding.found


def test_the_real_one_gpu_capture_fails_a_one_node_floor_and_says_why() -> None:
    output = PodOutput("p", "vm", "computeinstance-e00one", CAPTURE)
    outcome, _ = judge_output(
        output, ["computeinstance-e00one"], ["vm"], 8, floor_for(FLOORS, "gpu-h200-sxm", 1), "h200-burst", SINGLE
    )
    assert [f.subject for f in outcome.findings] == [
        "h200-burst: parameters of the run on node computeinstance-e00one",
        "h200-burst: ranks of the run on node computeinstance-e00one",
        "h200-burst: rank numbers of the run on node computeinstance-e00one",
        "h200-burst: bus bandwidth on node computeinstance-e00one",
    ]
    assert outcome.findings[0].found == "header nGpus 1 (the job asked for 8: -g 8)"
    assert "0 GB/s busbw" in outcome.findings[3].found


def test_without_a_floor_the_bandwidth_is_measured_and_warned_not_judged() -> None:
    outcome, _ = judge_output(fabric_output(12.0), NODES, HOSTS, 8, None, "h200-train", FABRIC)
    assert outcome.passed and outcome.warnings and "no floor" not in outcome.summary
    assert outcome.warnings[0].found.startswith("none; measured 12 GB/s")


def _judged_row_with(column_figures: dict[int, str]) -> str:
    """The fabric log at 455.9 GB/s with the 1 GiB row's columns (split on white space) replaced."""
    log = fabric_output(455.9).log
    fields = next(line for line in log.splitlines() if line.split()[:1] == [str(GIB)]).split()
    for column, figure in column_figures.items():
        fields[column] = figure
    return _with_row(log, GIB, "  " + "  ".join(fields))


def _judge_fabric(log: str) -> Outcome:
    outcome, _ = judge_output(
        replace(fabric_output(455.9), log=log),
        NODES,
        HOSTS,
        8,
        floor_for(FLOORS, "gpu-h200-sxm", 4),
        "h200-train",
        FABRIC,
    )
    return outcome


@pytest.mark.parametrize("figure", ["1e300", "1e6", "100001"])
@pytest.mark.parametrize("column", [7, 11], ids=["oop-busbw", "ip-busbw"])
def test_a_busbw_out_of_range_in_either_column_fails_though_the_other_passes(figure: str, column: int) -> None:
    """The judged figure is the lower column: a 1e300 beside 455.9 was dropped unseen and the run passed."""
    outcome = _judge_fabric(_judged_row_with({column: figure}))
    [unmeasured] = [f for f in outcome.findings if "measurements" in f.subject]
    place = "out-of-place" if column < 9 else "in-place"
    assert f"{GIB} B ({place} busbw)" in unmeasured.found and "a busbw above 100000 GB/s" in unmeasured.found


def test_a_busbw_out_of_range_in_both_columns_says_so_not_below_the_floor() -> None:
    outcome = _judge_fabric(_judged_row_with({6: "516129", 7: "1e6", 10: "516129", 11: "1e6"}))
    [bandwidth] = [f for f in outcome.findings if "bus bandwidth" in f.subject]
    assert bandwidth.found.endswith(
        "(out of place 1e+06, in place 1e+06): outside 0 to 100000 GB/s, no measurement (not compared with any floor)"
    )


@pytest.mark.parametrize("columns", [(8,), (12,), (8, 12)], ids=["oop", "ip", "both"])
def test_a_row_whose_data_was_not_checked_fails_saying_so(columns: tuple[int, ...]) -> None:
    """nccl-tests prints #wrong N/A under -c 0: nothing proves the data arrived intact."""
    outcome = _judge_fabric(_judged_row_with(dict.fromkeys(columns, "N/A")))
    [check] = outcome.findings
    assert check.subject == f"h200-train: data check on nodes {', '.join(NODES)}"
    assert check.found == f"#wrong N/A (the data was not checked: all_reduce_perf -c 0) at sizes {GIB} B"
    assert "-c 1" in check.expected and "-c 0" in check.likely_cause


def test_a_rank_listed_twice_is_not_two_gpus(tmp_path: Path) -> None:
    """Rank 0's line in place of rank 7's: eight lines on the one host, so the per-host count alone passed it."""
    log = one_node(480.0)
    lines = log.splitlines()
    [rank0] = [line for line in lines if line.startswith("#  Rank  0 ")]
    [rank7] = [line for line in lines if line.startswith("#  Rank  7 ")]
    host = "verify-burnin-h200-burst-abcde-0"
    outcome, _ = judge_output(
        PodOutput("p", host, "computeinstance-e00burst0", log.replace(rank7, rank0)),
        ["computeinstance-e00burst0"],
        [host],
        8,
        floor_for(FLOORS, "gpu-h200-sxm", 1),
        "h200-burst",
        SINGLE,
    )
    [ranks] = outcome.findings
    assert ranks.subject == "h200-burst: rank numbers of the run on node computeinstance-e00burst0"
    assert (ranks.expected, ranks.found) == (
        "ranks 0 to 7, each once (one per GPU of the 1 pod(s))",
        "rank 0 listed 2 times; rank 7 missing",
    )


@pytest.mark.parametrize(
    ("header", "found"),
    [
        ("maxBytes 1024", "maxBytes 1024 (the job asked for 1073741824: -e 1073741824)"),
        ("minBytes 1024", "minBytes 1024 (the job asked for 8: -b 8)"),
        ("nGpus 8", "nGpus 8 (the job asked for 1: -g 1)"),
        ("nThread 0", "nThread 0 (the job asked for 1: -t 1)"),
        ("validation: 0", "validation: 0 (the job asked for 1: -c 1)"),
        ("step: 4(factor)", "step: 4(factor) (the job asked for 2(factor): -f 2)"),
    ],
)
def test_a_header_other_than_the_jobs_fails_naming_the_field(header: str, found: str) -> None:
    """Once `maxBytes 1024` made the 1 KiB row the judged one, against the 1 GiB floor; the floor is judged on its
    own size's row whatever the header says."""
    field = header.split()[0]
    log = re.sub(rf"{re.escape(field)} [0-9]+(\([a-z]+\))?", header, fabric_output(455.9).log, count=1)
    outcome = _judge_fabric(log)
    [parameters] = [f for f in outcome.findings if "parameters" in f.subject]
    assert parameters.found == f"header {found}"
    assert parameters.expected == (
        "the header of the run the job asked for (all_reduce_perf -b 8 -e 1073741824 -f 2 -t 1 -g 1 -c 1 over 32 ranks)"
    )
    assert f"at {GIB} B" in outcome.summary


@pytest.mark.parametrize(
    ("columns", "found"),
    [
        ({1: "0"}, f"count 0 at {GIB} B (a float row of that size holds 268435456)"),
        ({4: "5"}, f"root 5 at {GIB} B (an all-reduce has no root: -1)"),
        (
            {6: "0.00"},
            f"algbw 0 beside busbw 455.9 at {GIB} B out of place (busbw is algbw x 2(n-1)/n = 0 for 32 ranks)",
        ),
    ],
)
def test_a_row_no_run_of_the_job_prints_fails_naming_the_field(columns: dict[int, str], found: str) -> None:
    outcome = _judge_fabric(_judged_row_with(columns))
    [rows] = [f for f in outcome.findings if "rows of the run" in f.subject]
    assert rows.found == found


def test_out_of_bounds_without_wrong_rows_reads_as_a_sentence() -> None:
    log = fabric_output(455.9).log.replace("# Out of bounds values : 0 OK", "# Out of bounds values : 3 FAILED")
    [check] = _judge_fabric(log).findings
    assert check.found == "3 out-of-bounds check(s); no row lists its wrong elements (#wrong 0 at every size)"


def test_a_cut_log_is_a_finding_with_its_tail() -> None:
    cut = (
        fabric_output(455.9).log.split("# Out of bounds")[0]
        + "verify-burnin-h200-train-abcde-2: Test NCCL failure common.cu:1006 'unhandled system error / NET/IB : ibv_reg_mr failed'\n"
    )
    outcome, run = judge_output(replace(fabric_output(0), log=cut), NODES, HOSTS, 8, None, "h200-train", FABRIC)
    assert run is None
    [finding] = outcome.findings
    assert (
        "stopped on verify-burnin-h200-train-abcde-2: NCCL failure" in finding.found and "ibv_reg_mr" in finding.found
    )


FIELDS = {
    "platform": "gpu-h200-sxm",
    "minNodes": 1,
    "floorGbps": 80,
    "marginPercent": 20,
    "publishedGbps": 100,
    "publishedRun": "r",
    "source": "s",
    "date": "'2026-12-01'",
}


def entry(**changed: object) -> str:
    """One floors entry in YAML's flow style: FIELDS with `changed` (None: the field left out)."""
    fields = {**FIELDS, **changed}
    return "{" + ", ".join(f"{key}: {value}" for key, value in fields.items() if value is not None) + "}"


ENTRY = entry()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("floors: [{platform: gpu-h200-sxm}]", "floors[0].minNodes is required"),
        (f"floors: [{entry(platform='x')}]", 'platform got "x"'),
        (
            f"floors: [{entry(platform='gpu-h20-sxm')}]",
            "gpu-h20-sxm is no GPU platform Nebius lists; did you mean gpu-h200-sxm?",
        ),
        (f"floors: [{entry(minNodes=0)}]", "floors[0].minNodes got 0; expected a whole"),
        (f"floors: [{entry(minNodes=2, maxNodes=1)}]", "maxNodes 1 is below minNodes 2"),
        (f"floors: [{entry(floorGbps=-3)}]", "floors[0].floorGbps got -3"),
        (f"floors: [{entry(floorGbps='.nan')}]", "floors[0].floorGbps got NaN"),
        (f"floors: [{entry(floorGbps='.inf')}]", "floors[0].floorGbps got Infinity"),
        (f"floors: [{entry(floorGbps=repr('3'))}]", 'floors[0].floorGbps got "3"'),
        (f"floors: [{entry(marginPercent='twenty')}]", 'floors[0].marginPercent got "twenty"'),
        (f"floors: [{entry(date=repr('2026-13-01'))}]", "YYYY-MM-DD"),
        (f"floors: [{entry(flor=1)}]", 'floors[0] has unknown field(s) "flor"; did you mean floorGbps?'),
        (f"flors: [{ENTRY}]", 'has unknown field(s) "flors"; did you mean floors?'),
        ("- just a list", 'got ["just a list"]; expected a map {checked?, floors: [...]}'),
        (
            f"floors: [{entry(floorGbps=99999, publishedGbps=455.9)}]",
            "floors[0] floorGbps 99999 is above publishedGbps 455.9",
        ),
        (
            f"floors: [{entry(floorGbps=400, publishedGbps=455.9)}]",
            "floors[0] floorGbps 400 is not publishedGbps 455.9 less marginPercent 20 (364.72 GB/s",
        ),
        (
            f"floors: [{entry(floorGbps=100, publishedGbps=455.9)}]",
            "floors[0] floorGbps 100 is not publishedGbps 455.9 less marginPercent 20",
        ),
        # A floor says where it comes from: a bare `floorGbps: 1` is no figure anyone measured.
        (
            f"floors: [{entry(floorGbps=1, marginPercent=None, publishedGbps=None, publishedRun=None)}]",
            "floors[0].marginPercent is required",
        ),
        (f"floors: [{entry(publishedGbps=None)}]", "floors[0].publishedGbps is required"),
        (f"floors: [{entry(publishedRun=None)}]", "floors[0].publishedRun is required"),
        # Within the rounding tolerance of 0, or a typo: no floor at all.
        (
            f"floors: [{entry(floorGbps=1e-300)}]",
            "floors[0].floorGbps got 1e-300; expected a bus bandwidth in GB/s, 1 to 100000",
        ),
        (
            f"floors: [{entry(floorGbps=0.5, publishedGbps=0.625)}]",
            "floors[0].publishedGbps got 0.625; expected a bus bandwidth",
        ),
        (
            f"floors: [{entry(floorGbps=50, marginPercent=50)}]",
            "floors[0].marginPercent got 50; expected the margin below the published figure, 0 to below 50 %",
        ),
        (f"floors: [{ENTRY}, {ENTRY}]", "floors[1] covers gpu-h200-sxm at node counts floors[0] already covers"),
        (
            f"floors: [{entry(minNodes=2)}, {entry(maxNodes=4)}]",
            "floors[1] covers gpu-h200-sxm at node counts floors[0] already covers",
        ),
        (f"floors: [{entry(platform=repr('gpu-h200-sxm '))}]", 'platform got "gpu-h200-sxm "'),
        ("floors: []", "floors got []; expected a list of 1 to 1000 floors"),
        (
            f"floors: [{entry(date=repr('2099-12-01'))}]",
            'floors[0].date date "2099-12-01" is in the future; expected the day the figure was read',
        ),
        (
            f"checked: '2026-11-30'\nfloors: [{ENTRY}]",
            "floors[0].date 2026-12-01 is after checked 2026-11-30: expected each entry's date on or before",
        ),
        (f"checked: '2099-12-01'\nfloors: [{ENTRY}]", 'checked date "2099-12-01" is in the future'),
        ("floors: [" + entry(source='"a\\u0000b"') + "]", 'floors[0].source got "a\\u0000b"; expected 1 to 300'),
        (
            "floors: [" + entry(source='"a\\u202eb\\u0007"') + "]",
            'floors[0].source got "a\\u202eb\\u0007"',
        ),
        ("floors: [" + entry(publishedRun='"r\\e[31m"') + "]", "floors[0].publishedRun got"),
        (f"floors: [{entry(source=repr(' s'))}]", 'source got " s"; expected 1 to 300 printable ASCII characters'),
    ],
)
def test_a_floors_file_that_cannot_be_used_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "floors.yaml"
    path.write_text(text)
    with pytest.raises(FloorsError) as refused:
        load_floors(path)
    assert f"{path}: not a floors file" in str(refused.value) and message in str(refused.value)


def test_entries_of_other_platforms_or_disjoint_counts_and_a_rounded_floor_are_taken(tmp_path: Path) -> None:
    """455.9 less 20 % is 364.72: the project's file writes 365, whole GB/s, and that is the same floor."""
    path = tmp_path / "floors.yaml"
    one = entry(maxNodes=1)
    two = entry(minNodes=2, floorGbps=365, publishedGbps=455.9)
    other = entry(platform="gpu-h100-sxm")
    path.write_text(f"floors: [{one}, {two}, {other}]")
    assert [floor.gbps for floor in load_floors(path)] == [80, 365, 80]


def test_the_cli_refuses_a_bad_floors_file_before_asking_the_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "floors.yaml"
    path.write_text("floors: [{platform: x}]")
    assert cli.main(["--stack", "prod", "--burn-in-floors", str(path), "--kubeconfig", str(tmp_path / "none")]) == 2
    assert f"error: --burn-in-floors: {path}: not a floors file" in capsys.readouterr().err


@pytest.mark.parametrize("skip_smoke", [["--skip-smoke"], []], ids=["skip-smoke", "with-smoke"])
def test_the_floors_file_is_read_even_when_the_burn_in_does_not_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], skip_smoke: list[str]
) -> None:
    path = tmp_path / "floors.yaml"
    path.write_text(f"floors: [{entry(marginPercent='twenty')}]")
    arguments = ["--stack", "prod", *skip_smoke, "--burn-in-floors", str(path), "--kubeconfig", str(tmp_path / "none")]
    assert cli.main(arguments) == 2
    assert 'floors[0].marginPercent got "twenty"' in capsys.readouterr().err


def test_skip_smoke_and_burn_in_together_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--stack", "prod", "--skip-smoke", "--burn-in", "--kubeconfig", str(tmp_path / "none")]) == 2
    assert "--burn-in runs workloads on the GPU nodes and --skip-smoke creates none" in capsys.readouterr().err


def test_a_stacks_own_floor_comes_first(tmp_path: Path) -> None:
    path = tmp_path / "floors.yaml"
    path.write_text(
        f"floors: [{entry(minNodes=2, floorGbps=430, marginPercent=10, publishedGbps=478, publishedRun='our run')}]"
    )
    settings = cli.burn_in_settings(cli.parse_args(["--burn-in-floors", str(path)]))
    assert floor_for(settings.floors, "gpu-h200-sxm", 4).gbps == 430
    assert floor_for(settings.floors, "gpu-h200-sxm", 1).gbps == 374


# --- the run against a cluster that behaves like the API server -------------------------------------------


def node(name: str, group: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {NODE_GROUP_LABEL: group}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


CLUSTER_NODES = [node(name, "h200-train") for name in NODES] + [node("computeinstance-e00burst0", "h200-burst")]
MULTI_GPU = {
    "metadata": {"name": MULTI_GPU_TEMPLATE},
    "spec": {
        "spec": {
            "devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 8}}]}
        }
    },
}


class FakeBurnInCluster:
    """Answers as the API server would for a Job whose pods run `outputs` (one log per group's pod 0 or per pod)."""

    def __init__(self, logs: dict[str, str], phase: str = "Succeeded", finished: bool = True) -> None:
        self.logs = logs
        self.phase = phase
        self.finished = finished
        self.created: list[tuple[str, str]] = []
        self.deleted: list[tuple[str, str]] = []
        self.jobs: dict[str, dict] = {}
        self.interrupt_on_read = False
        self.server = "https://10.0.0.1"

    def read_claim_template(self, namespace: str, name: str) -> dict | None:
        return MULTI_GPU if name == MULTI_GPU_TEMPLATE else None

    def create_object(self, namespace: str, manifest: dict) -> dict:
        self.created.append((manifest["kind"], manifest["metadata"]["name"]))
        if manifest["kind"] == "Job":
            self.jobs[manifest["metadata"]["name"]] = manifest
        return {**manifest, "metadata": {**manifest["metadata"], "uid": "uid-1"}}

    def delete_object(self, kind: str, namespace: str, name: str) -> None:
        self.deleted.append((kind, name))

    def read_job(self, namespace: str, name: str) -> dict | None:
        if self.interrupt_on_read:
            raise KeyboardInterrupt
        done = [{"type": "Complete", "status": "True"}] if self.finished else []
        return {"metadata": {"name": name}, "status": {"conditions": done}}

    def list_pods_labelled(self, namespace: str, selector: str) -> list[dict]:
        name = selector.split("=", 1)[1]
        manifest = self.jobs[name]
        group = manifest["spec"]["template"]["spec"]["nodeSelector"][NODE_GROUP_LABEL]
        nodes = [n["metadata"]["name"] for n in CLUSTER_NODES if n["metadata"]["labels"][NODE_GROUP_LABEL] == group]
        return [
            {
                "metadata": {
                    "name": f"{name}-{i}-q{i}x",
                    "labels": {"batch.kubernetes.io/job-completion-index": str(i)},
                },
                "spec": {"hostname": f"{name}-{i}", "nodeName": nodes[i] if self.phase != "Pending" else None},
                "status": {"phase": self.phase}
                | (
                    {
                        "conditions": [
                            {
                                "type": "PodScheduled",
                                "status": "False",
                                "reason": "Unschedulable",
                                "message": "0/6 nodes are available: 4 cannot allocate all claims.",
                            }
                        ]
                    }
                    if self.phase == "Pending"
                    else {}
                ),
            }
            for i in range(manifest["spec"]["completions"])
        ]

    def pod_events(self, namespace: str, name: str) -> list[dict]:
        return [
            {
                "reason": "FailedScheduling",
                "message": "0/6 nodes are available: 4 cannot allocate all claims.",
                "type": "Warning",
            }
        ]

    def pod_log(self, namespace: str, name: str, container: str) -> str:
        group = "h200-burst" if "h200-burst" in name else "h200-train"
        return self.logs[group]


def settings(tmp_path: Path, **changes: Any) -> BurnInSettings:
    ticks = iter(range(0, 100000, 5))
    fields: dict[str, Any] = {
        "requested": True,
        "state_file": tmp_path / "state.json",
        "clock": lambda: float(next(ticks)),
        "sleep": lambda _s: None,
        "name_suffix": lambda: "abcde",
        "today": lambda: "2026-12-01",
    }
    return BurnInSettings(**{**fields, **changes})


def one_node(busbw: float) -> str:
    """One pod running -g 8: eight ranks of one process on one host."""
    run = with_bandwidth(parse_all_reduce(CAPTURE), Fabric(("verify-burnin-h200-burst-abcde-0",)), lambda _: busbw)
    return render(replace(run, gpus_per_thread=8, ranks=tuple(replace(rank, pid=1211) for rank in run.ranks)))


def test_a_healthy_cluster_passes_and_the_run_leaves_nothing(tmp_path: Path) -> None:
    cluster = FakeBurnInCluster({"h200-train": fabric_output(455.9).log, "h200-burst": one_node(480.0)})
    outcome = BurnInRun(cluster, PROD, settings(tmp_path), CLUSTER_NODES, lambda _: None).run()
    assert outcome.passed, outcome.findings
    assert "h200-train: 455.9 GB/s busbw" in outcome.summary and "h200-burst: 480 GB/s busbw" in outcome.summary
    # Priced as the stack prices it, with the table's doubt about the H200 price beside the figure.
    assert "at 8 GPUs x $3.50 per GPU-hour per node (doubtful price (prices/nebius.yaml): likely low" in outcome.summary
    assert cluster.created == [
        ("Job", "verify-burnin-h200-train-abcde"),
        ("Secret", "verify-burnin-h200-train-abcde"),
        ("Service", "verify-burnin-h200-train-abcde"),
        ("Job", "verify-burnin-h200-burst-abcde"),
    ]
    assert cluster.deleted == cluster.created


def test_a_slow_fabric_fails_naming_its_nodes_and_still_cleans_up(tmp_path: Path) -> None:
    cluster = FakeBurnInCluster({"h200-train": fabric_output(40.0).log, "h200-burst": one_node(480.0)})
    outcome = BurnInRun(cluster, PROD, settings(tmp_path), CLUSTER_NODES, lambda _: None).run()
    [finding] = outcome.findings
    assert finding.subject == f"h200-train: bus bandwidth on nodes {', '.join(NODES)}"
    assert cluster.deleted == cluster.created


def test_pods_that_cannot_start_are_named_with_the_schedulers_reason(tmp_path: Path) -> None:
    cluster = FakeBurnInCluster({}, phase="Pending", finished=False)
    outcome = BurnInRun(cluster, PROD, settings(tmp_path, start_timeout_s=30), CLUSTER_NODES, lambda _: None).run()
    assert len(outcome.findings) == 5
    assert all("cannot allocate all claims" in f.found + f.likely_cause for f in outcome.findings), outcome.findings
    assert outcome.findings[0].subject.startswith("pod verify-burnin-h200-train-abcde-0-q0x")
    assert cluster.deleted == cluster.created


def test_a_run_that_never_ends_is_stopped_at_its_deadline(tmp_path: Path) -> None:
    cluster = FakeBurnInCluster({}, phase="Running", finished=False)
    cluster.logs = {
        "h200-train": CAPTURE.split("# Out of bounds")[0],
        "h200-burst": CAPTURE.split("# Out of bounds")[0],
    }
    outcome = BurnInRun(cluster, PROD, settings(tmp_path, timeout_s=60), CLUSTER_NODES, lambda _: None).run()
    assert outcome.findings and all("cut short" in f.found for f in outcome.findings)
    assert cluster.deleted == cluster.created


def test_ctrl_c_deletes_what_was_created_then_interrupts(tmp_path: Path) -> None:
    cluster = FakeBurnInCluster({})
    cluster.interrupt_on_read = True
    with pytest.raises(SmokeInterrupted) as interrupted:
        BurnInRun(cluster, PROD, settings(tmp_path), CLUSTER_NODES, lambda _: None).run()
    assert interrupted.value.leftovers == ()
    assert (
        cluster.deleted
        == cluster.created
        == [(k, "verify-burnin-h200-train-abcde") for k in ("Job", "Secret", "Service")]
    )


def test_a_deletion_that_fails_is_reported_with_the_command(tmp_path: Path) -> None:
    cluster = FakeBurnInCluster({"h200-train": fabric_output(455.9).log, "h200-burst": one_node(480.0)})

    def refuse(kind: str, namespace: str, name: str) -> None:
        raise ClusterError("forbidden (403)")

    cluster.delete_object = refuse  # type: ignore[method-assign]
    outcome = BurnInRun(cluster, PROD, settings(tmp_path), CLUSTER_NODES, lambda _: None).run()
    assert "kubectl -n dra-samples delete job verify-burnin-h200-train-abcde" in outcome.findings[0].likely_cause


# --- when it runs --------------------------------------------------------------------------------------------


def test_it_runs_after_a_change_to_the_gpu_groups_and_not_again_once_passed(tmp_path: Path) -> None:
    auto = settings(tmp_path, requested=None)
    gate = BurnInGate(auto, PROD, "https://10.0.0.1", read_only=False)
    assert gate.skip_reason(CLUSTER_NODES) is None
    gate.record(Outcome("fine"))
    assert "as at the last passing burn-in (2026-12-01)" in (
        BurnInGate(auto, PROD, "https://10.0.0.1", read_only=False).skip_reason(CLUSTER_NODES) or ""
    )
    replaced = [*CLUSTER_NODES[:-1], node("computeinstance-e00burst9", "h200-burst")]
    assert BurnInGate(auto, PROD, "https://10.0.0.1", read_only=False).skip_reason(replaced) is None
    assert BurnInGate(auto, PROD, "https://10.0.0.2", read_only=False).skip_reason(CLUSTER_NODES) is None
    resized = replace(
        PROD, groups=tuple(replace(g, preset="1gpu-16vcpu-200gb") if g.name == "h200-burst" else g for g in PROD.groups)
    )
    assert fingerprint(resized, CLUSTER_NODES) != fingerprint(PROD, CLUSTER_NODES)


def test_a_failed_burn_in_is_not_recorded_and_flags_override_the_gate(tmp_path: Path) -> None:
    gate = BurnInGate(settings(tmp_path, requested=None), PROD, "s", read_only=False)
    assert gate.skip_reason(CLUSTER_NODES) is None
    failed, _ = judge_output(
        fabric_output(1.0), NODES, HOSTS, 8, floor_for(FLOORS, "gpu-h200-sxm", 4), "h200-train", FABRIC
    )
    assert not failed.passed
    gate.record(failed)
    assert not (tmp_path / "state.json").exists()
    assert (
        BurnInGate(settings(tmp_path, requested=False), PROD, "s", read_only=False).skip_reason(CLUSTER_NODES)
        == "skipped (--no-burn-in)"
    )
    assert "--skip-smoke" in (
        BurnInGate(settings(tmp_path), PROD, "s", read_only=True).skip_reason(CLUSTER_NODES) or ""
    )
    assert (
        BurnInGate(settings(tmp_path), PROD, "s", read_only=False).skip_reason([])
        == "no GPU group has a Ready node to burn in"
    )


@pytest.mark.parametrize("requested", [None, True])
def test_a_stack_of_one_gpu_nodes_skips_the_burn_in_as_verify_md_says(tmp_path: Path, requested: bool | None) -> None:
    """dev creates no multi-gpu template (one GPU a node): its first verify, and --burn-in, skip the step."""
    dev = load_expectations("dev")
    assert MULTI_GPU_TEMPLATE not in dev.claim_templates
    reason = BurnInGate(settings(tmp_path, requested=requested), dev, "s", read_only=False).skip_reason(
        [node("computeinstance-e00dev", "h200")]
    )
    assert reason is not None
    page = " ".join((ROOT / "docs" / "verify.md").read_text().split())
    assert f"saying `{reason}`: dev's first verify does not burn in" in page


def test_the_burn_in_prices_a_spot_group_as_the_stack_does() -> None:
    """A spot group costs at most its ceiling (components/values/cost.py), not the on-demand list price."""
    config = program_config(load_stack_config("prod"))
    groups = json.loads(config["gpuNodeGroups"])
    groups[1]["capacity"] = {"type": "spot", "maxPricePerGpuHour": "0.50"}
    expectations = expectations_for(parse_stack_config({**config, "gpuNodeGroups": json.dumps(groups)}, "prod"), "prod")
    burst = expectations.group("h200-burst")
    assert burst is not None and burst.price is not None
    assert burst.price.usd_per_node_hour == Decimal("4.00")
    assert burst.price.basis.startswith("8 GPUs x $0.5 per GPU-hour at most (maxPricePerGpuHour")


@pytest.mark.parametrize(
    ("value", "command"),
    [("", '--stack="$STACK"'), ("1", '--stack="$STACK" --burn-in'), ("0", '--stack="$STACK" --no-burn-in')],
)
def test_make_verify_forces_the_burn_in_with_burn_in_1_and_skips_it_with_0(value: str, command: str) -> None:
    made = make_verify(f"BURN_IN={value}")
    assert made.returncode == 0, made.stderr
    assert made.stdout.split("-m tools.verify ", 1)[1].strip() == command


@pytest.mark.parametrize("value", ["yes", "1 0", "2"])
def test_make_verify_refuses_any_other_burn_in_value_naming_it(value: str) -> None:
    made = make_verify(f"BURN_IN={value}")
    assert made.returncode == 2 and made.stdout == ""
    assert f"BURN_IN={value}: give 1 to run the burn-in, 0 to skip it, or leave it out" in made.stderr


def make_verify(*variables: str) -> subprocess.CompletedProcess[str]:
    """`make verify`'s command line as make would run it (-n: nothing runs)."""
    return subprocess.run(
        ["make", "-n", "--no-print-directory", "-o", "venv/.installed", "verify", *variables],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={key: value for key, value in os.environ.items() if key != "BURN_IN"},
    )
