"""The SDK floor of `make bench` registers what the program does, options included."""

from __future__ import annotations

from tests.existing_clusters import existing
from tools.bench.floor import replay_run, same_registrations, sdk_class_path, shape_of

TEMPLATE = "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"


def test_the_replay_registers_the_program_s_options():
    """A claim template's spec is immutable: the program replaces it, deleting first (components/dra_workloads.py)."""
    program = existing("dev")
    assert program.error is None
    floor = replay_run(shape_of(program), "dev")
    assert floor.error is None
    assert same_registrations(program, floor)
    templates = floor.of_type(TEMPLATE)
    assert templates and all(t.replace_on_changes == ["spec"] and t.delete_before_replace for t in templates)


def test_sdk_class_paths():
    assert sdk_class_path("pulumi:providers:kubernetes") == ("pulumi_kubernetes", "Provider")
    assert sdk_class_path(TEMPLATE) == ("pulumi_kubernetes.resource.v1", "ResourceClaimTemplate")
    assert sdk_class_path("kubernetes:helm.sh/v3:Release") == ("pulumi_kubernetes.helm.v3", "Release")
    assert sdk_class_path("nebius:index/mk8sV1Cluster:Mk8sV1Cluster") == ("pulumi_nebius", "Mk8sV1Cluster")
