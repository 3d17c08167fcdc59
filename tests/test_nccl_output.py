"""The all_reduce_perf parser on the real H200 capture and on variants printed with nccl-tests' own formats."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from tests.nccl_format import Fabric, nccl_failure_line, render, with_bandwidth
from tools.verify.nccl_output import NcclOutputError, parse_all_reduce

CAPTURE = Path(__file__).parent / "data" / "nccl" / "all_reduce_perf-h200x1.txt"
TWO_PODS = Fabric(hosts=("burnin-h200-train-0", "burnin-h200-train-1"))


@pytest.fixture(scope="module")
def capture() -> str:
    return CAPTURE.read_text(encoding="utf-8")


def test_the_real_capture_is_read_whole(capture: str) -> None:
    run = parse_all_reduce(capture)
    assert run.version == "2.19.6"
    assert (run.threads, run.gpus_per_thread, run.min_bytes, run.max_bytes) == (1, 1, 8, 1073741824)
    assert [(r.rank, r.host, r.device, r.pci, r.name) for r in run.ranks] == [(0, "vm", 0, "0000:00:06", "NVIDIA H200")]
    assert len(run.rows) == 28 and run.rows[0].size_bytes == 8
    largest = run.largest
    assert (largest.size_bytes, largest.count, largest.data_type, largest.redop) == (
        1073741824,
        268435456,
        "float",
        "sum",
    )
    assert (largest.out_of_place.time_us, largest.out_of_place.algbw_gbps) == (509.09, 2109.1)
    assert (largest.in_place.time_us, largest.in_place.algbw_gbps) == (1.43, 752078.0)
    # One GPU has no peer: busbw = algbw x 2(n-1)/n is 0 at n = 1 (doc/PERFORMANCE.md).
    assert largest.busbw_gbps == 0.0 and run.avg_busbw_gbps == 0.0
    assert run.out_of_bounds == 0 and all(row.wrong == 0 for row in run.rows)


def test_the_format_helper_prints_the_capture_byte_for_byte(capture: str) -> None:
    """The variants below are only as real as this: nccl-tests' printf formats reproduce the capture exactly."""
    assert render(parse_all_reduce(capture)) == capture


def test_a_two_pod_run_names_every_rank_and_its_host(capture: str) -> None:
    run = with_bandwidth(parse_all_reduce(capture), TWO_PODS, lambda size: 400.0 if size == 1 << 30 else 12.5)
    parsed = parse_all_reduce(render(run))
    assert len(parsed.ranks) == 16
    assert parsed.hosts == TWO_PODS.hosts
    assert parsed.largest.busbw_gbps == 400.0
    assert parsed.avg_busbw_gbps == run.avg_busbw_gbps


def test_wrong_elements_are_counted_per_row(capture: str) -> None:
    run = with_bandwidth(parse_all_reduce(capture), TWO_PODS, lambda _: 400.0, lambda size: 7 if size == 1 << 20 else 0)
    text = render(run)
    assert "# Out of bounds values : 2 FAILED" in text
    parsed = parse_all_reduce(text)
    assert parsed.out_of_bounds == 2
    assert [row.size_bytes for row in parsed.rows if row.wrong] == [1 << 20]


def test_a_run_without_the_data_check_reads_n_a_as_unknown(capture: str) -> None:
    real = parse_all_reduce(capture)
    unchecked = replace(
        real,
        rows=tuple(
            replace(row, out_of_place=replace(row.out_of_place, wrong=None), in_place=replace(row.in_place, wrong=None))
            for row in real.rows
        ),
    )
    text = render(unchecked)
    assert "   N/A" in text.splitlines()[-8]
    parsed = parse_all_reduce(text)
    assert parsed.largest.out_of_place.wrong is None and parsed.largest.wrong == 0


@pytest.mark.parametrize("rows_kept", [0, 1, 27])
def test_a_log_cut_short_is_a_verdict_not_a_traceback(capture: str, rows_kept: int) -> None:
    lines = capture.splitlines(keepends=True)
    first_row = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    with pytest.raises(NcclOutputError, match="no result rows" if rows_kept == 0 else "cut short"):
        parse_all_reduce("".join(lines[: first_row + rows_kept]))


def test_a_failed_nccl_call_names_the_host(capture: str) -> None:
    lines = capture.splitlines(keepends=True)
    failure = nccl_failure_line(
        "burnin-h200-train-1",
        1006,
        "remote process exited or there was a network error",
        "NET/IB : Got completion from peer 10.0.0.12 with status=12",
    )
    text = "".join(lines[:20]) + failure + "\n"
    with pytest.raises(NcclOutputError, match=re.escape("stopped on burnin-h200-train-1: NCCL failure common.cu:1006")):
        parse_all_reduce(text)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty"),
        ("   \n\n", "empty"),
        ("exec /usr/bin/all_reduce_perf: no such file or directory\n", "not nccl-tests output"),
        ("\x00\xff garbage \x1b[31m\n" * 3, "not nccl-tests output"),
    ],
)
def test_garbage_is_named_not_parsed(text: str, message: str) -> None:
    with pytest.raises(NcclOutputError, match=message):
        parse_all_reduce(text)


def test_another_collective_is_refused(capture: str) -> None:
    with pytest.raises(NcclOutputError, match="from all_gather_perf, not all_reduce_perf"):
        parse_all_reduce(capture.replace("all_reduce_perf", "all_gather_perf"))


def test_a_header_without_ranks_is_refused(capture: str) -> None:
    text = "".join(line for line in capture.splitlines(keepends=True) if "Rank  0" not in line)
    with pytest.raises(NcclOutputError, match="lists no ranks"):
        parse_all_reduce(text)


def test_an_older_nccl_tests_is_read_too(capture: str) -> None:
    """What v2.13.8 prints (src/common.cu at that tag): no version, no starting/concluded lines, "[0x%02x]" bus IDs."""
    older = "".join(
        line.replace("[0000:00:06]", "[0x06]")
        for line in capture.splitlines(keepends=True)
        if not line.startswith(("# nccl-tests version", "# Collective test"))
    )
    run = parse_all_reduce(older)
    assert run.version is None and run.ranks[0].pci == "0x06" and len(run.rows) == 28
    with pytest.raises(NcclOutputError, match="cut short"):
        parse_all_reduce(older.split("# Avg bus bandwidth")[0])
