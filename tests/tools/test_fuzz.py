"""The property tests' two modes: derandomized in `make test` (tests/conftest.py), explored at random in `make fuzz`."""

from __future__ import annotations

import importlib
import itertools
import textwrap

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import ROOT
from tools import fuzz


def property_tests() -> list[tuple[str, object]]:
    found = []
    for path in fuzz.property_modules():
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        found.extend(
            (f"{path.name}::{name}", test)
            for name, test in vars(module).items()
            if getattr(test, "is_hypothesis_test", False)
        )
    return found


def test_every_property_module_is_found():
    names = {path.name for path in fuzz.property_modules()}
    assert {"test_validation_wording.py", "test_hostile_input.py", "test_input_properties.py"} <= names
    assert "conftest.py" not in names and "test_plan.py" not in names


@pytest.mark.skipif(settings.get_current_profile_name() != "deterministic", reason="make test's profile only")
def test_make_test_runs_every_property_test_derandomized_without_a_database_or_a_clock():
    """Same commit, same examples, same verdict: no seed, no examples replayed from a past run, no wall-clock limit."""
    tests = property_tests()
    assert len(tests) >= 20
    for name, test in tests:
        own = test._hypothesis_internal_use_settings  # type: ignore[attr-defined]
        assert own.derandomize and own.database is None, name
        assert own.deadline is None and HealthCheck.too_slow in own.suppress_health_check, name


def test_the_fuzz_profile_explores_and_keeps_what_it_finds():
    profile = settings.get_profile("fuzz")
    assert not profile.derandomize and profile.database is not None
    # Its verdict is the examples', not the machine's load: no deadline, no timing health check.
    assert profile.deadline is None and HealthCheck.too_slow in profile.suppress_health_check


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_runs_go_on_with_counted_up_seeds_while_the_budget_holds_another():
    clock, seeds, said = Clock(), [], []

    def run(seed: int) -> fuzz.Outcome:
        seeds.append(seed)
        clock.now += 40
        return fuzz.Outcome(0, ())

    assert fuzz.fuzz(130, 7, 1, run, said.append, clock) == 0
    # 40 s a run: after three (120 s) the 10 s left cannot hold a fourth.
    assert seeds == [7, 8, 9]
    assert said[0].startswith("fuzz: budget 130 s, first seed 7")
    assert "3 run(s), no failure" in said[-1]


def test_the_first_run_starts_even_on_no_budget_and_seeds_wrap():
    seeds: list[int] = []
    assert fuzz.fuzz(0, fuzz.SEED_LIMIT - 1, 1, lambda seed: seeds.append(seed) or fuzz.Outcome(0, ()), print) == 0
    assert seeds == [fuzz.SEED_LIMIT - 1]
    clock, seeds = Clock(), []

    def run(seed: int) -> fuzz.Outcome:
        seeds.append(seed)
        clock.now += 4
        return fuzz.Outcome(0, ())

    fuzz.fuzz(10, fuzz.SEED_LIMIT - 1, 1, run, print, clock)
    assert seeds == [fuzz.SEED_LIMIT - 1, 0]


def test_a_failing_run_ends_the_session_with_its_seed_and_the_command_that_reproduces_it():
    said: list[str] = []
    outcomes = itertools.chain(
        [fuzz.Outcome(0, ())], itertools.repeat(fuzz.Outcome(1, ("FAILED tests/t.py::p - boom",)))
    )
    assert fuzz.fuzz(1000, 41, 3, lambda seed: next(outcomes), said.append, Clock()) == 1
    text = "\n".join(said)
    assert "run 2 (seed 42) failed" in text
    assert "FAILED tests/t.py::p - boom" in text
    assert "make fuzz SEED=42 FUZZ_SECONDS=1000 FUZZ_SCALE=3" in text


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--seconds", "-1"], "--seconds: got -1; expected 0 to 86400 (a day)"),
        (["--seed", str(2**32)], f"--seed: got {2**32}; expected 0 to {2**32 - 1}"),
        (["--scale", "0"], "--scale: got 0; expected 1 to 1000"),
        # The a38 hostile round: nan passed every bound, inf ran forever, a huge scale made one run endless, and an
        # abbreviation was read as the option.
        (["--seconds", "nan"], "--seconds: got nan; expected 0 to 86400"),
        (["--seconds", "inf"], "--seconds: got inf; expected 0 to 86400"),
        (["--scale", str(10**26)], "--scale: got 100000000000000000000000000; expected 1 to 1000"),
        (["--sec", "1"], "unrecognized arguments: --sec 1"),
    ],
)
def test_bad_arguments_are_refused_by_name(argv, said, capsys):
    with pytest.raises(SystemExit) as exit:
        fuzz.parse_args(argv)
    assert exit.value.code == 2 and said in capsys.readouterr().err


def test_a_real_pytest_run_takes_the_fuzz_profile_seed_scale_and_database(tmp_path, monkeypatch, capsys):
    """Through pytest and Hypothesis themselves: only property tests run, FUZZ_SCALE multiplies their examples,
    the seed decides the examples, and a failing example lands in the database named for the run."""
    (tmp_path / "conftest.py").write_text("from tests.conftest import *  # noqa: F403\n")
    drawn = tmp_path / "drawn"
    (tmp_path / "test_props.py").write_text(
        textwrap.dedent(
            f"""
            from hypothesis import given, settings, strategies as st

            @settings(max_examples=5)
            @given(st.integers())
            def test_recorded(n):
                with open({str(drawn)!r}, "a") as out:
                    out.write(f"{{n}}\\n")

            @given(st.integers())
            def test_always_fails(n):
                assert n != n

            def test_not_a_property():
                assert False
            """
        )
    )
    database = tmp_path / "database"
    monkeypatch.setenv("NEBIUS_DRA_FUZZ_DATABASE", str(database))

    def examples(seed: int) -> list[str]:
        drawn.unlink(missing_ok=True)
        outcome = fuzz.run_pytest(seed, [tmp_path / "test_props.py"], 3)
        shown = capsys.readouterr().out
        assert outcome.exit_code == 1 and "1 failed, 1 passed, 1 deselected" in shown, shown
        assert [line.split(" - ")[0].rsplit("/", 1)[-1] for line in outcome.failed] == [
            "test_props.py::test_always_fails"
        ], shown
        return drawn.read_text().splitlines()

    first = examples(1234)
    assert len(first) == 15
    assert examples(1234) == first
    assert examples(1235) != first
    assert any(path.is_file() for path in database.rglob("*"))
