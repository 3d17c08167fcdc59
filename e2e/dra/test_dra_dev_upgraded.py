"""dev's own stack (kubernetesVersion 1.34) on a real Kubernetes 1.36 control plane, as after a cluster upgrade.

The same tests as test_dra_dev.py, imported so pytest runs them in this module: the API server must
store every object of the plan as sent, the 1.36 scheduler must allocate every claim template and the
sample pod on the H200 node, and a plain `nvidia.com/gpu: 1` pod through the chart's extended-resource
DeviceClass, and tools.verify must pass and fail as on 1.34.

Run from the repository root: venv/bin/python -m pytest -q e2e/dra
"""

from __future__ import annotations

from test_dra_dev import (
    test_a_plain_nvidia_gpu_pod_is_served_by_dra_only_where_the_minor_has_extended_resources,
    test_api_server_accepts_every_object_of_the_plan,
    test_every_claim_template_is_allocated_on_a_group_that_serves_it,
    test_kubelet_plugin_lands_on_every_gpu_node,
    test_more_gpus_than_any_node_has_stays_unschedulable,
    test_sample_pod_runs_where_the_stack_means_it,
    test_stand_in_nodes_report_the_kubelet_version_of_the_control_plane,
    test_verifier_fails_on_a_gpu_node_without_slices,
    test_verifier_fails_on_a_gpu_node_without_the_kubelet_plugin_label,
    test_verifier_fails_on_a_node_advertising_the_legacy_gpu_resource,
    test_verifier_passes,
)

SCENARIO = "dev-upgraded"
