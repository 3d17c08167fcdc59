"""The wrapper modules agree with the table of DRA features per minor (no build, no control plane).

policies/dra_minors.json names, for each minor, the k8s.io/kubernetes release its feature gates were read
from; the e2e control plane of that minor must run that release, or the e2e tests would check the stack
against other defaults than the ones the stack assumes.

Run from the repository root:
    venv/bin/python -m pytest e2e/kube -q
"""

from __future__ import annotations

import json
from pathlib import Path

from control_plane import _build

TABLE = Path(__file__).resolve().parent.parent.parent / "policies" / "dra_minors.json"


def test_each_wrapper_builds_the_release_the_feature_table_was_read_from():
    minors = json.loads(TABLE.read_text())["minors"]
    for minor in _build.kube_minors():
        assert minor in minors, f"no row for Kubernetes {minor} in {TABLE}"
        assert minors[minor]["release"] == f"{_build.KUBE_MODULE} {_build.kube_version(minor)}", minor


def test_every_minor_of_the_table_has_a_wrapper():
    # Each supported minor gets its own control plane in `make e2e`, none is judged only by the fast tier.
    assert list(_build.kube_minors()) == list(json.loads(TABLE.read_text())["minors"])


def test_each_wrapper_directory_names_the_minor_its_go_mod_requires():
    for minor, directory in _build.kube_wrappers().items():
        assert directory.name == f"kubernetes-{minor}", (directory, minor)
