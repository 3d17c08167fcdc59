"""e2e/dra/scheduler_perf.py: reading upstream's scheduler benchmark output, `make bench-e2e`'s anchor.

The fixture is a data-items file scheduler_perf wrote here, unedited (tests/data/scheduler_perf/README.md).
"""

from __future__ import annotations

import ast
import copy
import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "e2e" / "dra" / "scheduler_perf.py"
FIXTURE = (
    ROOT / "tests" / "data" / "scheduler_perf" / "BenchmarkPerfScheduling_benchmark_dra-v1.34.12-2000pods_100nodes.json"
)


def load_module():
    spec = importlib.util.spec_from_file_location("scheduler_perf_under_test", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


sp = load_module()


def document() -> dict:
    return json.loads(FIXTURE.read_text())


def test_the_module_imports_only_the_standard_library_at_its_top():
    """The fast tier loads it without the e2e's packages; what needs the control plane's build helpers is imported
    inside the functions that build and run."""
    tree = ast.parse(SCRIPT.read_text())
    imported = {
        name.split(".")[0]
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for name in ([alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""])
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported


def test_the_throughput_of_a_real_output_is_its_scheduling_throughput_item():
    """40 data items (extension point durations, memory, ...); one is the workload's SchedulingThroughput."""
    found = sp.throughput(document(), "SchedulingWithResourceClaimTemplate", "2000pods_100nodes")
    assert found == sp.Throughput(
        name="BenchmarkPerfScheduling/SchedulingWithResourceClaimTemplate/2000pods_100nodes/test",
        average=69.87520411249737,
        perc50=67.22372465630339,
        perc90=99.57999752160474,
    )


@pytest.mark.parametrize(
    ("test_case", "workload"),
    [
        ("SchedulingWithResourceClaimTemplate", "2000pods_200nodes"),  # another workload of the same case
        ("SchedulingWithResourceClaimTemplate", "2000pods"),  # a prefix of the workload's name
        ("SteadyStateClusterResourceClaimTemplate", "2000pods_100nodes"),  # another case, same workload name
    ],
)
def test_another_workload_is_not_taken_for_the_one_asked(test_case, workload):
    with pytest.raises(sp.AnchorError, match=r"no SchedulingThroughput of .*names: BenchmarkPerfScheduling/"):
        sp.throughput(document(), test_case, workload)


def test_a_throughput_item_without_data_says_so():
    """scheduler_perf writes the item without data when the pods were all scheduled within one sample."""
    doc = copy.deepcopy(document())
    item = next(i for i in doc["dataItems"] if i["labels"]["Metric"] == "SchedulingThroughput")
    del item["data"]
    with pytest.raises(sp.AnchorError, match="has no data"):
        sp.throughput(doc, "SchedulingWithResourceClaimTemplate", "2000pods_100nodes")


def test_the_bench_pattern_selects_exactly_one_workload():
    """`go test -bench` splits on '/' and matches each level unanchored: each part is anchored here, so the
    100-node workload does not also run the 1,000-node one whose name it is part of."""
    pattern = sp.bench_pattern("SchedulingWithResourceClaimTemplate", "2000pods_100nodes")
    levels = pattern.split("/")
    names = ["BenchmarkPerfScheduling", "SchedulingWithResourceClaimTemplate", "2000pods_100nodes"]
    assert all(re.search(level, name) for level, name in zip(levels, names, strict=True))
    assert not re.search(levels[2], "2000pods_1000nodes") and not re.search(levels[2], "x2000pods_100nodes")
    assert not re.search(levels[1], "SchedulingWithResourceClaimTemplateFirstAvailable")


def test_the_arguments_run_no_unit_test_once_and_any_label():
    args = sp.bench_args("SchedulingWithResourceClaimTemplate", "2000pods_100nodes", Path("/tmp/out"))
    assert "-test.run=^$" in args and "-test.benchtime=1ns" in args
    assert "-perf-scheduling-label-filter=" in args  # empty: the default, "performance", skips this workload
    assert "-data-items-dir=/tmp/out" in args


def test_the_verdict_compares_the_reference_with_the_anchors_average():
    anchor = sp.Throughput(
        "BenchmarkPerfScheduling/SchedulingWithResourceClaimTemplate/2000pods_100nodes/test", 60.0, 58.0, 90.0
    )
    assert sp.verdict(48.0, anchor, 0.8).startswith("PASS  no-selector: 0.80x the anchor's rate, 48.0 against 60.0")
    assert sp.verdict(47.9, anchor, 0.8).startswith("FAIL  no-selector: 0.80x")
    assert sp.verdict(10.6, anchor, 0.8).startswith("FAIL  no-selector: 0.18x")


def test_no_anchor_is_a_fail_that_says_why():
    assert sp.verdict(100.0, "scheduler_perf exited 1", 0.8) == "FAIL  no anchor: scheduler_perf exited 1"
