"""The all_reduce_perf parser on the real H200 capture and on variants printed with nccl-tests' own formats."""

from __future__ import annotations

import contextlib
import math
import re
import time
from dataclasses import replace

import pytest

from tests.helpers import TESTS
from tests.nccl_format import Fabric, nccl_failure_line, render, with_bandwidth
from tools.verify.nccl_output import NcclOutputError, parse_all_reduce

CAPTURE = TESTS / "data" / "nccl" / "all_reduce_perf-h200x1.txt"
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


MIB = 1 << 20
# Far above what a linear read of 1 MiB takes (milliseconds), far below what a backtracking one does: the rank
# pattern's old `(?P<name>.*?)\s*$` took 13 s on 64,000 spaces and grows with the square of the length.
CPU_BOUND_S = 5.0
RANK_LINE = "#  Rank  0 Group  0 Pid   1211 on         vm device  0 [0000:00:06] NVIDIA H200"
ROW_LINE = "  1073741824     268435456     float     sum      -1   509.09  2109.1    0.00       0     1.43  752078    0.00       0"


@pytest.mark.parametrize(
    "line",
    [
        " " * MIB,
        RANK_LINE + " " * MIB + "x",
        RANK_LINE.replace("NVIDIA H200", " " * MIB),
        "#" + " " * MIB + "Rank",
        "#  Rank " + "0" * MIB,
        ROW_LINE.replace("       0", " " * MIB + "x"),
        "  1" + " 1" * (MIB // 2),
        "  " + "1" * MIB + " " * MIB,
        "  1  2  float  sum  -1" + " 1.5" * (MIB // 4) + " x",
        "# Avg bus bandwidth" + " " * MIB + "x",
        "# Out of bounds values" + " " * MIB,
        "h: Test NCCL failure" + " " * MIB,
        "x" * MIB + ": Test",
    ],
    ids=lambda line: f"{line[:24].strip() or 'spaces'}~{len(line)}",
)
def test_a_line_of_a_mebibyte_is_read_in_linear_time(capture: str, line: str) -> None:
    """Each adversarial line, inside a whole real log, is read within a CPU-time bound that only backtracking reaches."""
    lines = capture.splitlines()
    text = "\n".join([*lines[:6], line, *lines[6:]])
    started = time.process_time()
    with contextlib.suppress(NcclOutputError):
        parse_all_reduce(text)
    assert time.process_time() - started < CPU_BOUND_S


def test_reading_stops_at_its_cpu_limit_with_the_limit_named(capture: str) -> None:
    with pytest.raises(NcclOutputError, match=r"more than -1 s of CPU time \(PARSE_CPU_LIMIT_S\)"):
        parse_all_reduce(capture, cpu_limit_s=-1.0)


def test_a_rank_name_keeps_its_text_without_its_trailing_spaces(capture: str) -> None:
    text = capture.replace(RANK_LINE, RANK_LINE + "   \t")
    assert parse_all_reduce(text).ranks[0].name == "NVIDIA H200"


@pytest.mark.parametrize("wrong", ["1e999", "1" * 5000, "2e18"])
def test_a_wrong_count_that_is_no_count_is_refused_not_a_traceback(capture: str, wrong: str) -> None:
    row = ROW_LINE[: ROW_LINE.rindex("0")] + wrong
    with pytest.raises(NcclOutputError, match="is not a count of elements"):
        parse_all_reduce(capture.replace(ROW_LINE, row))


def test_a_size_of_more_digits_than_a_count_has_is_not_a_row(capture: str) -> None:
    row = ROW_LINE.replace("1073741824", "9" * 5000, 1)
    with pytest.raises(NcclOutputError, match="no row at 1073741824 B, the largest size the header asks for"):
        parse_all_reduce(capture.replace(ROW_LINE, row))


def test_a_log_without_the_size_its_header_asks_for_is_refused(capture: str) -> None:
    """Once a log whose header says maxBytes 1073741824 but holding only an 8 B row was judged at 8 B."""
    rows = [line for line in capture.splitlines() if re.match(r"\s+[0-9]+\s+[0-9]+\s+float", line)]
    cut = capture
    for line in rows[1:]:
        cut = cut.replace(line + "\n", "")
    with pytest.raises(NcclOutputError, match=r"no row at 1073741824 B, .* its largest row is 8 B"):
        parse_all_reduce(cut)


@pytest.mark.parametrize(
    ("header", "requested"),
    [
        ("minBytes 8 maxBytes 1073741824 step: 2(factor)", 1073741824),
        ("minBytes 8 maxBytes 1000 step: 2(factor)", 512),
        ("minBytes 8 maxBytes 1000 step: 100(bytes)", 908),
        ("minBytes 3 maxBytes 100 step: 3(factor)", 81),
    ],
)
def test_the_judged_size_is_the_last_of_common_cus_size_loop(capture: str, header: str, requested: int) -> None:
    text = re.sub(r"minBytes 8 maxBytes 1073741824 step: 2\(factor\)", header, capture)
    if requested in (1073741824, 512):
        run = parse_all_reduce(text)
        assert (run.requested_bytes, run.largest.size_bytes) == (requested, requested)
    else:
        with pytest.raises(NcclOutputError, match=f"no row at {requested} B"):
            parse_all_reduce(text)


@pytest.mark.parametrize(
    ("out_of_place", "in_place"), [("nan", "0.00"), ("0.00", "nan"), ("inf", "0.00"), ("0.00", "-inf")]
)
def test_a_busbw_that_is_not_a_number_is_not_hidden_by_the_other(
    capture: str, out_of_place: str, in_place: str
) -> None:
    fields = ROW_LINE.split()
    fields[7], fields[11] = out_of_place, in_place
    largest = parse_all_reduce(capture.replace(ROW_LINE, "  " + "  ".join(fields))).largest
    assert math.isnan(largest.busbw_gbps)


@pytest.mark.parametrize("wrong", ["0.9", "2.5", "1e-3"])
def test_a_wrong_count_with_a_fraction_is_refused_not_read_as_a_whole_number(capture: str, wrong: str) -> None:
    """ "%6g" of an int64 prints a whole number (src/util.cu writeBenchmarkLineBody); 0.9 was read as int 0: no error."""
    row = ROW_LINE[: ROW_LINE.rindex("0")] + wrong
    with pytest.raises(NcclOutputError, match=rf"#wrong {re.escape(wrong)} is not a count of elements \(a whole"):
        parse_all_reduce(capture.replace(ROW_LINE, row))
    assert parse_all_reduce(capture.replace(ROW_LINE, ROW_LINE[: ROW_LINE.rindex("0")] + "1.23457e+06")).rows


@pytest.mark.parametrize(("column", "figure"), [(5, "0.00"), (5, "0"), (5, "-1.5"), (6, "-3.0"), (11, "-0.5")])
def test_a_time_of_zero_or_a_bandwidth_below_zero_is_no_measurement(capture: str, column: int, figure: str) -> None:
    fields = ROW_LINE.split()
    fields[column] = figure
    largest = parse_all_reduce(capture.replace(ROW_LINE, "  " + "  ".join(fields))).largest
    assert largest.not_finite(), fields


def other_rows(line: str) -> str:
    """`-d all -o all`: the same size in int8 `max` and double `sum` (src/common.cu's test_typenames, test_opnames)."""
    return "\n".join(
        [
            line.replace("     float     sum", f"{kind:>10s}  {op:>6s}")
            for kind, op in (("int8", "max"), ("double", "sum"))
        ]
        + [line]
    )


def test_only_the_float_sum_rows_are_judged(capture: str) -> None:
    """At the largest size, an int8 `max` and a double `sum` row far below the float sum's busbw: the float sum is
    judged (the worst row of the size was the int8 one)."""
    fast = ROW_LINE.replace("    0.00       0     1.43  752078    0.00", "  9999.0       0     1.43  752078  9999.0")
    text = capture.replace(ROW_LINE, "\n".join([*other_rows(ROW_LINE).splitlines()[:2], fast]))
    run = parse_all_reduce(text)
    assert len(run.rows) == 30
    assert (run.largest.data_type, run.largest.redop, run.largest.busbw_gbps) == ("float", "sum", 9999.0)


def test_a_log_without_a_float_sum_row_at_the_largest_size_is_refused(capture: str) -> None:
    text = capture.replace(ROW_LINE, other_rows(ROW_LINE).rsplit("\n", 1)[0])
    with pytest.raises(
        NcclOutputError, match=r"no float sum row at 1073741824 B \(its rows there are double sum, int8 max"
    ):
        parse_all_reduce(text)


def test_two_runs_in_one_log_are_refused(capture: str) -> None:
    with pytest.raises(NcclOutputError, match=r"two '# nThread \.\.\.' headers: two runs written into one log"):
        parse_all_reduce(capture + capture)
