"""Shared fixtures: the real program run under the mock engine, once per stack and session."""

from __future__ import annotations

import pytest

from components.config.stack_file import load_stack_config
from tests.helpers import STACKS
from tools.plan import model
from tools.plan.mock_engine import ProgramRun, run_program


@pytest.fixture(scope="session")
def stack_runs() -> dict[str, ProgramRun]:
    runs = {stack: run_program(stack) for stack in STACKS}
    for stack, run in runs.items():
        assert run.error is None, f"{stack}: {run.error}"
    return runs


@pytest.fixture(scope="session")
def dev_run(stack_runs) -> ProgramRun:
    return stack_runs["dev"]


@pytest.fixture(scope="session")
def prod_run(stack_runs) -> ProgramRun:
    return stack_runs["prod"]


@pytest.fixture
def stack_config():
    """A copy of a stack's merged config, to mutate in a test: `stack_config("dev")`."""
    return lambda stack: dict(load_stack_config(stack))


@pytest.fixture
def program_runs(monkeypatch, dev_run) -> list[str]:
    """The stacks the plan ran the program for; the run itself is the dev stack's, already made, whatever the stack."""
    stacks: list[str] = []

    def run_dev(stack, config=None, stack_file=None):
        stacks.append(stack)
        return dev_run

    monkeypatch.setattr(model, "run_program", run_dev)
    return stacks
