"""A setting that means nothing without another is refused naming the other (components/config/dependent.py)."""

from __future__ import annotations

import json

import pytest

from components.config import parse_stack_config
from components.config.stack_file import load_stack_config, program_config
from tests.stack_configs import GB300_GROUP, refusal, with_compute_domains


@pytest.mark.parametrize(
    ("stack", "changes", "expected"),
    [
        ("prod", {"queues": json.dumps({"namespace": "kueue", "featureGates": {"TopologyAwareScheduling": True}})},
         "nebius-dra:queues: sets featureGates, namespace but no team (teams is empty): Kueue is installed only for teams"),
        ("prod", {"queues": json.dumps({"teams": [], "deviceClasses": ["gpu.nvidia.com"]})},
         "nebius-dra:queues: sets deviceClasses but no team"),
        ("dev", {"infinibandFabric": "fabric-3"},
         'nebius-dra:infinibandFabric: got "fabric-3", but no GPU group sets infiniband: true (nebius-dra:gpuNodeGroups)'),
        ("dev", {"gpuMetrics": "false", "dcgmExporterVersion": "4.8.2"},
         'nebius-dra:dcgmExporterVersion: got "4.8.2", but nebius-dra:gpuMetrics is false'),
        ("dev", {"gpuMetrics": "false", "gpuMetricsValues": '{"resources": {}}'}, "nebius-dra:gpuMetricsValues: got"),
        ("dev", {"kubePrometheusStackVersion": "88.5.2"},
         'nebius-dra:kubePrometheusStackVersion: got "88.5.2", but nebius-dra:kubePrometheusStack is false'),
        ("prod", {"sampleGpuImage": "nvidia/cuda:13.0.0-base-ubuntu24.04"},
         "nebius-dra:sampleGpuImage: got \"nvidia/cuda:13.0.0-base-ubuntu24.04\", but nebius-dra:samplePods is false"),
        ("dev", {"builtinClaimTemplates": '["gpu"]', "multiGpuCount": "2", "samplePods": "false"},
         "nebius-dra:multiGpuCount: got 2, but nebius-dra:builtinClaimTemplates leaves out multi-gpu"),
        ("dev", {"builtinClaimTemplates": '["gpu", "multi-gpu"]', "gpuProducts": '["NVIDIA H200"]'},
         'nebius-dra:gpuProducts: got ["NVIDIA H200"], but nebius-dra:builtinClaimTemplates leaves out gpu-by-product'),
        ("dev", {"gpuOperatorVersion": "v25.10.1"},
         'nebius-dra:gpuOperatorVersion: got "v25.10.1", but every GPU group has a driversPreset'),
        ("dev", {"sampleRdmaImage": "nvcr.io/nvidia/pytorch:25.02-py3"},
         'nebius-dra:sampleRdmaImage: got "nvcr.io/nvidia/pytorch:25.02-py3", but no GPU group sets infiniband: true (nebius-dra:gpuNodeGroups)'),
        ("dev", {"allowedDeviceClasses": '["foo.example.com"]'},
         'nebius-dra:allowedDeviceClasses: got ["foo.example.com"], but nebius-dra:userClaimTemplates is empty'),
        ("prod", {"networkOperatorRepository": "https://mirror.example.com/nvidia"},
         "nebius-dra:networkOperatorRepository: got \"https://mirror.example.com/nvidia\", but no GPU group without a driversPreset"),
        # Hostile review (F13): ComputeDomains on H200 nodes, which have no multi-node NVLink, were taken.
        ("dev", {"draComputeDomains": "true"},
         "nebius-dra:draComputeDomains: got true, but the stack's GPU groups (nebius-dra:gpuNodeGroups) are on "
         "gpu-h200-sxm, and ComputeDomains (multi-node NVLink) are for GB200/GB300-class systems: of the known "
         "platforms, gpu-gb300"),
    ],
)  # fmt: skip
def test_a_setting_whose_part_is_off_is_refused_naming_what_it_needs(stack, changes, expected):
    assert expected in refusal(stack, **changes)


def test_the_same_settings_are_taken_when_their_part_is_on():
    config = program_config(load_stack_config("dev"))
    parse_stack_config({**config, "kubePrometheusStack": "true", "kubePrometheusStackVersion": "88.5.3"}, "dev")
    parse_stack_config({**config, "samplePods": "true", "sampleGpuImage": "nvidia/cuda:13.0.0-base-ubuntu24.04"}, "dev")
    parse_stack_config({**config, "gpuMetrics": "false", "dcgmExporterVersion": "4.8.3"}, "dev")  # its default
    parse_stack_config({**config, "gpuProducts": '["NVIDIA H200"]'}, "dev")  # gpu-by-product is a default template
    assert parse_stack_config({**config, **with_compute_domains("dev")}, "dev").driver.compute_domains
    prod = program_config(load_stack_config("prod"))  # an InfiniBand group: the rdma-workload sample runs the image
    rdma = "nvcr.io/nvidia/pytorch:25.02-py3"
    assert (
        parse_stack_config({**prod, "samplePods": "true", "sampleRdmaImage": rdma}, "prod").claims.sample_rdma_image
        == rdma
    )


def test_a_fabric_no_group_joins_waits_while_a_group_was_refused():
    """Whether a group joins the fabric is unknown while that group is taken out: no verdict on a guess."""
    groups = json.loads(load_stack_config("prod")["nebius-dra:gpuNodeGroups"])
    groups[0]["fixedNodeCount"] = "four"
    message = refusal("prod", gpuNodeGroups=json.dumps(groups))
    assert "fixedNodeCount" in message
    assert "infinibandFabric" not in message


def test_compute_domains_wait_while_the_gb300_group_was_refused():
    """Whether a GB300 group is there is unknown while that group is taken out: no verdict on a guess."""
    changes = with_compute_domains("dev")
    changes["gpuNodeGroups"] = json.dumps([{**GB300_GROUP, "fixedNodeCount": "one"}])
    message = refusal("dev", **changes)
    assert "fixedNodeCount" in message
    assert "draComputeDomains" not in message
