"""The cyclic collector is off while the program builds its stack, and as it was before once it has."""

from __future__ import annotations

import gc
import runpy
import subprocess
import sys
from collections.abc import Iterator

import pytest

import components.platform
from components.config.stack_file import PROJECT_DIR
from components.cyclic_gc import without_cyclic_gc
from tools.plan.mock_engine import run_program


@pytest.fixture
def collector_on() -> Iterator[None]:
    gc.enable()
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.enable()


def test_the_collector_is_off_inside_and_on_again_after(collector_on):
    with without_cyclic_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_comes_back_when_the_program_raises(collector_on):
    with pytest.raises(RuntimeError), without_cyclic_gc():
        raise RuntimeError
    assert gc.isenabled()


def test_a_collector_turned_off_before_stays_off(collector_on):
    gc.disable()
    with without_cyclic_gc(freeze_after=True):
        pass
    assert not gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_what_was_built_inside_is_out_of_the_collectors_reach_after_when_asked(collector_on):
    with without_cyclic_gc(freeze_after=True):
        built = [[index] for index in range(1000)]
    assert gc.isenabled()
    walked = {id(item) for item in gc.get_objects()}
    assert not any(id(item) in walked for item in built)
    assert gc.get_freeze_count() >= len(built)


def test_without_being_asked_nothing_is_frozen(collector_on):
    with without_cyclic_gc():
        [[index] for index in range(1000)]
    assert gc.get_freeze_count() == 0


def test_the_program_imports_and_builds_its_stack_with_the_collector_off(collector_on, monkeypatch):
    """As the Pulumi CLI's language host runs it: `__main__.py` itself turns the collector off, then back on."""
    seen: list[bool] = []
    build = components.platform.DraPlatform.__init__

    def spied(self, *args, **kwargs):
        seen.append(gc.isenabled())
        build(self, *args, **kwargs)

    monkeypatch.setattr(components.platform.DraPlatform, "__init__", spied)
    after: list[bool] = []

    def program() -> None:
        gc.enable()  # the mock engine's own `without_cyclic_gc` is undone, so only the program's is tested
        runpy.run_path(str(PROJECT_DIR / "__main__.py"), run_name="__main__")
        after.append(gc.isenabled())

    run = run_program("dev", entry=program)
    assert run.error is None
    assert seen == [False]
    assert after == [True]
    # The host's process runs this one program: the models and the SDK's modules are never walked again.
    assert gc.get_freeze_count() > 0


def test_the_plan_command_runs_with_the_collector_off_from_its_first_import(collector_on, monkeypatch, capsys):
    monkeypatch.setattr("sys.argv", ["tools.plan", "--help"])
    with pytest.raises(SystemExit) as exited:
        runpy.run_module("tools.plan", run_name="__main__")
    assert exited.value.code == 0
    assert not gc.isenabled()


def test_the_plan_command_leaves_its_heap_to_the_process_end_frozen():
    """Else the collection CPython runs at exit walks and frees the whole heap, about a fifth of dev's plan."""
    # atexit handlers run after the module's `sys.exit`, before the interpreter's own last collections.
    report = (
        "import atexit, gc, runpy, sys;"
        "atexit.register(lambda: print('frozen', gc.get_freeze_count(), file=sys.stderr));"
        "sys.argv = ['tools.plan', '--stack', 'dev', '--format', 'json', '--no-base', '--out', 'none'];"
        "runpy.run_module('tools.plan', run_name='__main__')"
    )
    done = subprocess.run(
        [sys.executable, "-c", report], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    frozen = int(done.stderr.rsplit("frozen ", 1)[1].split()[0])
    assert frozen > 100_000, done.stderr
