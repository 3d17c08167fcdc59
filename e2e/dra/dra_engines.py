"""The e2e's engines, loaded by path once, under one name each: e2e/pulumi and e2e/kube are no packages
(e2e/pulumi would shadow the SDK). e2e/dra, its allocation benchmark and e2e/cli all take them from here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PROJECT = Path(__file__).resolve().parents[2]


def load_by_path(name: str, path: Path) -> ModuleType:
    """e2e/pulumi and e2e/kube are no packages (e2e/pulumi would shadow the SDK): their modules load by path."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


engine_build = load_by_path("nebius_dra_e2e_pulumi_build", PROJECT / "e2e" / "pulumi" / "build.py")
engine_mod = load_by_path("nebius_dra_e2e_pulumi_engine", PROJECT / "e2e" / "pulumi" / "engine.py")
control_plane_mod = load_by_path("nebius_dra_e2e_control_plane", PROJECT / "e2e" / "kube" / "control_plane.py")
